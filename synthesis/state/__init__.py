"""Character state (DESIGN.md §5): per character in a frame, directed edges (affinity,
trust, what it knows of the other), mood and learned facts, and memories of what it
witnessed; updated after each outcome by a queued state pass (run.py), stored as deltas
(synthesis/state_models.py) whose fold (fold.py) is the truth, and given to the
character's own flesh prompt as named components (components.py)."""

from . import components  # noqa: E402, F401  (registers the prompt's state components)
