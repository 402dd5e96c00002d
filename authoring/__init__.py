"""What users author: worlds and lore, scenarios, affiliations, personas, assistants, and
the APIs that edit them and the LLM models they play on."""
