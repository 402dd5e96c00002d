"""Scenes: a frame's play cut into scenes, each closed scene summarised per character and
publicly, the summaries replacing the older scenes' outcomes in prompts (docs/synthesis.md,
"Scenes")."""
