"""Productions: AI-to-AI conversations in a world and scenario, with layered knowledge."""
