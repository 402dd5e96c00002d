"""Writes of character state: every change a `StateDelta` row, its cache (`Edge`,
`SeatState`) moved by the same clamped step the fold takes (fold.py); memories with their
pins capped; and `state_apply`, the rules a state pass's proposal goes through."""

import uuid
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from ..models import Outcome, Seat
from ..state_models import DeltaKind, Edge, Memory, MemorySource, SeatState, StateDelta
from .fold import DELTA_MAX, EdgeValues, SeatValues, edge_step, fact_step, mood_step
from .levels import clamp
from .schema import StateProposal

MEMORY_MAX = 600  # characters of one memory
FACT_MAX = 300  # characters of one learned fact
FACTS_PER_OUTCOME = 3
PINS_MAX = 8  # pinned memories a character keeps; a new pin unpins the oldest


def _flat(text: object, limit: int) -> str:
    return " ".join(str(text).split())[:limit]


@transaction.atomic
def delta_record(
    *,
    seat: Seat,
    kind: DeltaKind,
    outcome: Outcome | None = None,
    by: object | None = None,
    target: Seat | None = None,
    affinity: int = 0,
    trust: int = 0,
    mood: str = "",
    intensity: float = 0.0,
    text: str = "",
) -> StateDelta:
    """Store one change of `seat`'s state (an outcome's, or the GM's `by`), clamped, and
    move its cache the way the fold will.

    Raises:
        ValueError: an edge change without a target other than the seat itself.
    """
    if kind == DeltaKind.EDGE and (target is None or target.pk == seat.pk):
        raise ValueError("An edge goes from one character to another.")
    delta = StateDelta.objects.create(
        frame_id=seat.frame_id,
        seat=seat,
        target=target if kind == DeltaKind.EDGE else None,
        outcome=outcome,
        by=by,
        kind=kind,
        affinity=int(clamp(affinity, -DELTA_MAX, DELTA_MAX)),
        trust=int(clamp(trust, -DELTA_MAX, DELTA_MAX)),
        mood=mood,
        intensity=round(clamp(intensity, -1.0, 1.0), 4),
        text=_flat(text, FACT_MAX),
    )
    if kind == DeltaKind.EDGE:
        _edge_move(delta, outcome)
    elif kind == DeltaKind.RESET:  # as the fold: no edges, the starting mood, no facts
        Edge.objects.filter(source=seat).delete()
        SeatState.objects.filter(seat=seat).delete()
    else:
        _seat_move(delta)
    return delta


def _edge_move(delta: StateDelta, outcome: Outcome | None) -> None:
    edge, _ = Edge.objects.select_for_update().get_or_create(
        source_id=delta.seat_id, target_id=delta.target_id, defaults={"frame_id": delta.frame_id}
    )
    moved = edge_step(
        EdgeValues(edge.affinity, edge.trust, tuple(edge.knowledge)),
        affinity=delta.affinity,
        trust=delta.trust,
        text=delta.text,
    )
    edge.affinity, edge.trust, edge.knowledge = moved.affinity, moved.trust, list(moved.knowledge)
    fields = ["affinity", "trust", "knowledge"]
    if outcome is not None:  # a GM's edit is not an interaction
        edge.last_outcome, edge.last_interaction_at = outcome, timezone.now()
        fields += ["last_outcome", "last_interaction_at"]
    edge.save(update_fields=fields)


def _seat_move(delta: StateDelta) -> None:
    state, _ = SeatState.objects.select_for_update().get_or_create(
        seat_id=delta.seat_id, defaults={"frame_id": delta.frame_id}
    )
    values = SeatValues(state.mood, state.intensity, tuple(state.facts))
    if delta.kind == DeltaKind.MOOD:
        values = mood_step(values, mood=delta.mood, intensity=delta.intensity)
    else:
        values = fact_step(values, text=delta.text)
    state.mood, state.intensity, state.facts = values.mood, values.intensity, list(values.facts)
    state.save(update_fields=["mood", "intensity", "facts", "updated_at"])


@transaction.atomic
def memory_record(
    *,
    seat: Seat,
    outcome: Outcome,
    text: str,
    significance: int = 1,
    source: MemorySource = MemorySource.WITNESSED,
    told_by: Seat | None = None,
    reliability: float = 1.0,
) -> Memory | None:
    """`seat`'s memory of `outcome`, if it witnessed it (or was told, by `told_by`): a
    character never remembers what happened out of its sight. Significance 3 pins it;
    past PINS_MAX pins the oldest pin is let go.

    Returns:
        The memory, or None when the seat did not witness the outcome (nor was told), or
        already remembers it.
    """
    witnesses = [str(w) for w in outcome.witnesses or []]
    if source == MemorySource.WITNESSED and str(seat.pk) not in witnesses:
        return None
    if source == MemorySource.TOLD and told_by is None:
        return None
    if Memory.objects.filter(seat=seat, outcome=outcome, source=source).exists():
        return None
    significance = int(clamp(significance, 0, 3))
    memory = Memory.objects.create(
        frame_id=seat.frame_id,
        seat=seat,
        outcome=outcome,
        text=_flat(text, MEMORY_MAX),
        witnesses=witnesses,
        source=source,
        told_by=told_by,
        reliability=clamp(reliability, 0.0, 1.0),
        significance=significance,
        pinned=significance == 3,
    )
    if memory.pinned:
        pins = Memory.objects.filter(seat=seat, pinned=True).order_by("-created_at", "-id")
        extra = list(pins.values_list("pk", flat=True)[PINS_MAX:])
        Memory.objects.filter(pk__in=extra).update(pinned=False)
    return memory


def name_key(text: str) -> str:
    """A character's name as a model writes it, compared loosely."""
    return " ".join(str(text).strip().strip("[]").split()).casefold()


@transaction.atomic
def state_apply(
    *, outcome: Outcome, proposal: StateProposal, seats: Iterable[Seat], labels: dict
) -> list[uuid.UUID]:
    """Apply a state pass's proposal under the rules: only the outcome's witnesses change
    (whatever the model says of anyone else), each once; names it does not know are
    ignored; every delta is clamped (`delta_record`).

    Returns:
        The seats whose state changed.
    """
    by_name = {name_key(labels[s.pk]): s for s in seats if s.pk in labels}
    witnesses = {str(w) for w in outcome.witnesses or []}
    changed: list[uuid.UUID] = []
    for change in proposal.characters:
        seat = by_name.get(name_key(change.character))
        if seat is None or str(seat.pk) not in witnesses or seat.pk in changed:
            continue
        changed.append(seat.pk)
        for edge in change.relationships:
            target = by_name.get(name_key(edge.toward))
            if target is None or target.pk == seat.pk:
                continue
            delta_record(
                seat=seat,
                kind=DeltaKind.EDGE,
                outcome=outcome,
                target=target,
                affinity=edge.affinity,
                trust=edge.trust,
                text=edge.fact,
            )
        if change.mood or change.mood_intensity:
            delta_record(
                seat=seat,
                kind=DeltaKind.MOOD,
                outcome=outcome,
                mood=change.mood or "",
                intensity=change.mood_intensity,
            )
        for fact in [f for f in change.learned if f.strip()][:FACTS_PER_OUTCOME]:
            delta_record(seat=seat, kind=DeltaKind.FACT, outcome=outcome, text=fact)
        if change.memory.strip():
            memory_record(
                seat=seat, outcome=outcome, text=change.memory, significance=change.significance
            )
    return changed
