"""Who speaks next when nobody was chosen: the documented rule.

1. A participant addressed by name in the last turn speaks (the first one named, never the
   last speaker itself).
2. Otherwise the participant who spoke least recently on this branch (one who never spoke
   comes first, in cast order).
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Words of a name that are not how anyone is called: titles and articles ("The Stranger").
NOT_NAMES = {
    "mr",
    "mr.",
    "mrs",
    "mrs.",
    "ms",
    "ms.",
    "dr",
    "dr.",
    "detective",
    "officer",
    "lieutenant",
    "captain",
    "sir",
    "lady",
    "lord",
    "the",
    "old",
    "young",
    "little",
    "big",
}


@dataclass(frozen=True)
class CastEntry:
    assistant_id: object
    name: str


@dataclass(frozen=True)
class SpokenTurn:
    assistant_id: object | None  # None for a director turn
    content: str


def next_speaker(cast: Sequence[CastEntry], branch: Sequence[SpokenTurn]) -> object:
    """Return the assistant id who speaks after `branch` (root first, newest last)."""
    if not cast:
        raise ValueError("A production needs a cast.")
    last = branch[-1] if branch else None
    if last is not None:
        addressed = _first_addressed(cast, last)
        if addressed is not None:
            return addressed
    last_spoke = {entry.assistant_id: -1 for entry in cast}
    for index, turn in enumerate(branch):
        if turn.assistant_id in last_spoke:
            last_spoke[turn.assistant_id] = index
    candidates = [e for e in cast if last is None or e.assistant_id != last.assistant_id] or cast
    return min(candidates, key=lambda entry: last_spoke[entry.assistant_id]).assistant_id


def _first_addressed(cast: Sequence[CastEntry], last: SpokenTurn) -> object | None:
    best: tuple[int, object] | None = None
    for entry in cast:
        if entry.assistant_id == last.assistant_id:
            continue
        for alias in name_aliases(entry.name):
            # Case matters: names are capitalised, so "I will wait" does not call Will.
            match = re.search(rf"(?<!\w){re.escape(alias)}(?!\w)", last.content)
            if match and (best is None or match.start() < best[0]):
                best = (match.start(), entry.assistant_id)
    return None if best is None else best[1]


def name_aliases(name: str) -> list[str]:
    """The ways a character may be addressed: full name, each "A / B" part, first names,
    and a surname after a title ("Detective Johnson")."""
    aliases = {name.strip()}
    for part in re.split(r"\s*/\s*", name):
        part = part.strip()
        if not part:
            continue
        aliases.add(part)
        words = part.split()
        if len(words) > 1:
            aliases.update(word for word in (words[0], words[-1]) if word.lower() not in NOT_NAMES)
    return sorted((alias for alias in aliases if len(alias) >= 3), key=len, reverse=True)
