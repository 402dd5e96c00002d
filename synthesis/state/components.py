"""The character's own state in its flesh prompt, as named components of the medium pass
(synthesis/medium/components.py): YOUR MEMORIES, YOUR RELATIONSHIPS, YOUR MOOD (with what
it learned). Each is private (never in a shared frame's public prompt), reads only the
seat's own rows and is capped. Relationships and mood are read in gather's batch (one
statement each, whatever the cast's size); memories are recalled by one statement of
their own (selectors.py::recall), since what they are recalled for (the scene's words) is
only known once gather has read the liquid and the outcome. The line builders serve the AI
seats' prompts too (synthesis/ai_seats.py)."""

from collections.abc import Iterable, Mapping, Sequence

from ..medium.components import Component, component_register, loaded, section_titles
from ..medium.context import MediumContext, flat
from ..models import Outcome, Seat
from ..own_state import own_state_register
from ..state_models import Edge, Memory, SeatState
from .levels import compiled_parameters, level
from .selectors import OWN_EDGES, OWN_STATE, recall

MEMORIES_K = 8
MEMORY_LINE_MAX = 700
FACTS_SHOWN = 8
SCENE_OUTCOMES = 2  # the newest outcomes whose words a recall searches for


def outcome_texts(outcome: Outcome) -> list[str]:
    """An outcome's public words: its resolved actions and its facts."""
    texts = [str(a.get("action", "")) for a in outcome.actions_resolved or []]
    return texts + [str(f) for f in outcome.world_facts or []]


def scene_texts(ctx: MediumContext, outcome: Outcome | None) -> list[str]:
    """What the flesh prompt is about: the character's liquid, the actions being resolved,
    the outcome it narrates (or else the newest it read)."""
    texts = [x.content for x in ctx.own] + [a.text for a in ctx.to_resolve]
    for shown in [outcome] if outcome is not None else ctx.outcomes[-SCENE_OUTCOMES:]:
        texts += outcome_texts(shown)
    return texts


def memory_lines(memories: Iterable[Memory]) -> list[str]:
    """Recalled memories' lines (a production's prompt reads the same: productions.py)."""
    lines = []
    for memory in memories:
        marks = " (unforgettable)" if memory.pinned else ""
        if memory.source == "told":
            marks += " (told, not seen)"
        lines.append(f"- {flat(memory.text, MEMORY_LINE_MAX)}{marks}")
    return lines


def edge_line(name: str, affinity: int, trust: int, knowledge: Sequence[str]) -> str:
    """One relationship's line (a production's prompt reads the same: productions.py)."""
    line = f"- {name}: {level(affinity)} (affinity {affinity}, trust {trust})"
    if knowledge:
        line += "; knows: " + "; ".join(flat(k, 200) for k in list(knowledge)[-3:])
    return line


def relationship_lines(edges: Iterable[Edge], labels: Mapping) -> list[str]:
    lines = []
    for edge in edges:
        name = labels.get(edge.target_id)
        if name is None:  # a seat no longer in the frame
            continue
        line = edge_line(name, edge.affinity, edge.trust, edge.knowledge)
        if edge.summary:  # as of the last closed scene (synthesis/scenes/run.py)
            line += f"; {flat(edge.summary, 300)}"
        lines.append(line)
    return lines


def mood_lines(mood: str, intensity: float, facts: Sequence[str]) -> list[str]:
    parameters = compiled_parameters(mood=mood, intensity=intensity)
    shown = ", ".join(f"{k} {v:.1f}" for k, v in parameters.items() if abs(v - 0.5) >= 0.1)
    lines = [f"- {mood} (intensity {intensity:.1f})" + (f": {shown}" if shown else "")]
    if facts:
        learned = [flat(fact, 200) for fact in list(facts)[-FACTS_SHOWN:]]
        lines.append("- Has learned: " + "; ".join(learned))
    return lines


def seat_mood_lines(rows: Sequence[SeatState]) -> list[str]:
    return mood_lines(rows[0].mood, rows[0].intensity, rows[0].facts) if rows else []


def own_state_text(*, seat: Seat, labels: Mapping, scene: Sequence[str]) -> str:
    """The seat's own memories (recalled for `scene`), relationships (the others named by
    `labels`, as it knows them) and mood, as the flesh prompt's sections: for a prompt
    outside the medium pass (an AI seat's). Only the seat's own rows are read."""
    name = labels.get(seat.pk, seat.persona.name)
    titles = section_titles()
    parts = {
        "memories": memory_lines(recall(seat_id=seat.pk, scene=scene, k=MEMORIES_K)),
        "relationships": relationship_lines(
            Edge.objects.filter(source=seat).order_by("target"), labels
        ),
        "mood": seat_mood_lines(list(SeatState.objects.filter(seat=seat))),
    }
    return "\n\n".join(
        titles[key].format(name=name) + "\n" + "\n".join(lines)
        for key, lines in parts.items()
        if lines
    )


def _memories(ctx: MediumContext, outcome: Outcome | None) -> list[str]:
    recalled = recall(seat_id=ctx.seat.pk, scene=scene_texts(ctx, outcome), k=MEMORIES_K)
    return memory_lines(recalled)


for _component in (
    Component(
        "memories",
        _memories,
        items_max=MEMORIES_K,
        item_max=MEMORY_LINE_MAX + 40,
        private=True,
    ),
    Component(
        "relationships",
        lambda ctx, _outcome: relationship_lines(loaded(ctx, "relationships"), ctx.labels),
        items_max=24,
        item_max=900,
        private=True,
        read=lambda pass_: OWN_EDGES.read(source=pass_.seat_id),
    ),
    Component(
        "mood",
        lambda ctx, _outcome: seat_mood_lines(loaded(ctx, "mood")),
        items_max=2,
        item_max=2000,
        private=True,
        read=lambda pass_: OWN_STATE.read(seat=pass_.seat_id),
    ),
):
    component_register(_component)
own_state_register(own_state_text)
