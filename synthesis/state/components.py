"""The character's own state in its flesh prompt, as named components of the medium pass
(synthesis/medium/components.py): YOUR MEMORIES, YOUR RELATIONSHIPS, YOUR MOOD (with what
it learned). Each is private (never in a shared frame's public prompt), reads only the
seat's own rows in gather's batch (one statement each, whatever the cast's size) and is
capped."""

from collections.abc import Sequence

from ..medium.components import Component, component_register, loaded
from ..medium.context import MediumContext, flat
from ..state_models import Memory
from .levels import compiled_parameters, level
from .selectors import OWN_EDGES, OWN_MEMORIES, OWN_STATE, recall

MEMORIES_K = 8
MEMORY_LINE_MAX = 700
FACTS_SHOWN = 8


def memory_lines(memories: list[Memory]) -> list[str]:
    """The recalled memories' lines (a production's prompt reads the same: productions.py)."""
    lines = []
    for memory in recall(memories, k=MEMORIES_K):
        marks = " (unforgettable)" if memory.pinned else ""
        lines.append(f"- {flat(memory.text, MEMORY_LINE_MAX)}{marks}")
    return lines


def edge_line(name: str, affinity: int, trust: int, knowledge: Sequence[str]) -> str:
    line = f"- {name}: {level(affinity)} (affinity {affinity}, trust {trust})"
    if knowledge:
        line += "; knows: " + "; ".join(flat(k, 200) for k in list(knowledge)[-3:])
    return line


def mood_lines(mood: str, intensity: float, facts: Sequence[str]) -> list[str]:
    parameters = compiled_parameters(mood=mood, intensity=intensity)
    shown = ", ".join(f"{k} {v:.1f}" for k, v in parameters.items() if abs(v - 0.5) >= 0.1)
    lines = [f"- {mood} (intensity {intensity:.1f})" + (f": {shown}" if shown else "")]
    if facts:
        learned = [flat(fact, 200) for fact in list(facts)[-FACTS_SHOWN:]]
        lines.append("- Has learned: " + "; ".join(learned))
    return lines


def _memories(ctx: MediumContext, _outcome: object) -> list[str]:
    return memory_lines(loaded(ctx, "memories"))


def _relationships(ctx: MediumContext, _outcome: object) -> list[str]:
    lines = []
    for edge in loaded(ctx, "relationships"):
        name = ctx.labels.get(edge.target_id)
        if name is None:  # a seat no longer in the frame
            continue
        lines.append(edge_line(name, edge.affinity, edge.trust, edge.knowledge))
    return lines


def _mood(ctx: MediumContext, _outcome: object) -> list[str]:
    rows = loaded(ctx, "mood")
    if not rows:
        return []
    state = rows[0]
    return mood_lines(state.mood, state.intensity, state.facts)


for _component in (
    Component(
        "memories",
        _memories,
        items_max=MEMORIES_K,
        item_max=MEMORY_LINE_MAX + 20,
        private=True,
        read=lambda pass_: OWN_MEMORIES.read(seat=pass_.seat_id),
    ),
    Component(
        "relationships",
        _relationships,
        items_max=24,
        item_max=900,
        private=True,
        read=lambda pass_: OWN_EDGES.read(source=pass_.seat_id),
    ),
    Component(
        "mood",
        _mood,
        items_max=2,
        item_max=2000,
        private=True,
        read=lambda pass_: OWN_STATE.read(seat=pass_.seat_id),
    ),
):
    component_register(_component)
