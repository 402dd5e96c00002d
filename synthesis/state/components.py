"""The character's own state in its flesh prompt, as named components of the medium pass
(synthesis/medium/components.py): YOUR MEMORIES, YOUR RELATIONSHIPS, YOUR MOOD (with what
it learned). Each is private (never in a shared frame's public prompt), reads only the
seat's own rows in gather's batch (one statement each, whatever the cast's size) and is
capped."""

from ..medium.components import Component, component_register, loaded
from ..medium.context import MediumContext, flat
from .levels import compiled_parameters, level
from .selectors import OWN_EDGES, OWN_MEMORIES, OWN_STATE, recall

MEMORIES_K = 8
MEMORY_LINE_MAX = 700
FACTS_SHOWN = 8


def _memories(ctx: MediumContext, _outcome: object) -> list[str]:
    lines = []
    for memory in recall(loaded(ctx, "memories"), k=MEMORIES_K):
        marks = " (unforgettable)" if memory.pinned else ""
        lines.append(f"- {flat(memory.text, MEMORY_LINE_MAX)}{marks}")
    return lines


def _relationships(ctx: MediumContext, _outcome: object) -> list[str]:
    lines = []
    for edge in loaded(ctx, "relationships"):
        name = ctx.labels.get(edge.target_id)
        if name is None:  # a seat no longer in the frame
            continue
        line = f"- {name}: {level(edge.affinity)} (affinity {edge.affinity}, trust {edge.trust})"
        if edge.knowledge:
            line += "; knows: " + "; ".join(flat(k, 200) for k in edge.knowledge[-3:])
        if edge.summary:  # as of the last closed scene (synthesis/scenes/run.py)
            line += f"; {flat(edge.summary, 300)}"
        lines.append(line)
    return lines


def _mood(ctx: MediumContext, _outcome: object) -> list[str]:
    rows = loaded(ctx, "mood")
    if not rows:
        return []
    state = rows[0]
    parameters = compiled_parameters(mood=state.mood, intensity=state.intensity)
    shown = ", ".join(f"{k} {v:.1f}" for k, v in parameters.items() if abs(v - 0.5) >= 0.1)
    lines = [f"- {state.mood} (intensity {state.intensity:.1f})" + (f": {shown}" if shown else "")]
    if state.facts:
        learned = [flat(fact, 200) for fact in state.facts[-FACTS_SHOWN:]]
        lines.append("- Has learned: " + "; ".join(learned))
    return lines


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
