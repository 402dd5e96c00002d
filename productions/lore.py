"""The lorebook: world entries called up by keywords in the recent conversation, added to
the prompt of a speaker who may know them and never to one who may not (DESIGN.md §3).

Who may know an entry is its layer: `universal` everyone; `affiliation` the members of
its group, covert members included (they are members: only others do not know it);
`persona` that persona alone. A key matches a whole word or phrase in any case: "Ring"
calls up on "the ring glowed" but not on "ringing". Triggered entries go in priority order
while the world's token budget holds them; one that does not fit is left out, and a
smaller one after it may still fit.
"""

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from django.db.models import prefetch_related_objects

from authoring.models import LoreEntry, LoreLayer, Persona, World
from lmix.llm.tokens import count_tokens

from .knowledge import Section, memberships_prefetch
from .models import Turn

TITLE = "LORE (what you know of things just mentioned):"


def lore_for_world(*, world: World) -> list[LoreEntry]:
    """The world's enabled entries, in the order the budget takes them."""
    return list(
        LoreEntry.objects.filter(world=world, enabled=True).order_by("-priority", "created_at")
    )


@lru_cache(maxsize=1024)
def _key_pattern(key: str) -> re.Pattern[str]:
    # \w on both sides, not \b: a key may start or end with a non-word character ("C++").
    return re.compile(rf"(?<!\w){re.escape(key.strip())}(?!\w)", re.IGNORECASE)


def lore_triggered(entry: LoreEntry, text: str) -> bool:
    """Whether `text` mentions one of the entry's keys, as a whole word or phrase."""
    return any(key.strip() and _key_pattern(key).search(text) for key in entry.keys)


def lore_may_know(entry: LoreEntry, *, speaker: Persona) -> bool:
    """Whether `speaker` may know the entry: its layer, and the speaker's own memberships
    (all of them, covert ones too). An entry with an unknown layer is known to nobody."""
    if entry.layer == LoreLayer.UNIVERSAL:
        return True
    if entry.layer == LoreLayer.PERSONA:
        return entry.persona_id is not None and entry.persona_id == speaker.pk
    if entry.layer == LoreLayer.AFFILIATION:
        prefetch_related_objects([speaker], memberships_prefetch())
        return entry.affiliation_id is not None and any(
            membership.affiliation_id == entry.affiliation_id
            for membership in speaker.memberships.all()
        )
    return False


def recent_text(branch: Sequence[Turn], depth: int) -> str:
    """The text of the last `depth` turns a speaker reads (finished, with content)."""
    readable = [turn.content for turn in branch if turn.is_readable]
    return "\n".join(readable[-depth:]) if depth > 0 else ""


def lore_select(
    *, entries: Iterable[LoreEntry], speaker: Persona, text: str, budget: int
) -> list[LoreEntry]:
    """The entries `text` calls up that `speaker` may know, within `budget` tokens.

    Args:
        entries: candidates in priority order (`lore_for_world`); disabled ones are skipped.
        text: the recent conversation (`recent_text`).
        budget: the most tokens their lines may take together.
    """
    chosen: list[LoreEntry] = []
    used = 0
    for entry in entries:
        if not entry.enabled or not lore_triggered(entry, text):
            continue
        if not lore_may_know(entry, speaker=speaker):
            continue
        cost = count_tokens(_line(entry))
        if used + cost > budget:
            continue
        chosen.append(entry)
        used += cost
    return chosen


def lore_section(entries: Sequence[LoreEntry]) -> str:
    """The prompt block of the chosen entries; "" when there are none."""
    if not entries:
        return ""
    return Section(TITLE, "\n".join(_line(entry) for entry in entries)).render()


def _line(entry: LoreEntry) -> str:
    return f"- {' '.join(entry.content.split())}"
