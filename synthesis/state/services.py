"""Writes of character state: every change a `StateDelta` row, its cache (`Edge`,
`SeatState`) moved by the same clamped step the fold takes (fold.py); memories with their
pins capped; and `state_apply`, the rules a state pass's proposal goes through."""

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from django.db import transaction
from django.utils import timezone

from lmix.errors import ApplicationError

from ..events import notify_state_changed
from ..models import Outcome, Seat
from ..state_models import (
    DeltaKind,
    Edge,
    Memory,
    MemoryEdit,
    MemorySource,
    SeatState,
    StateDelta,
)
from .fold import DELTA_MAX, EdgeValues, SeatValues, edge_step, fact_step, mood_step
from .levels import MOOD_NAMES, clamp
from .schema import EdgeChange, StateProposal
from .selectors import memory_about

MEMORY_MAX = 600  # characters of one memory
FACT_MAX = 300  # characters of one learned fact
FACTS_PER_OUTCOME = 3
PINS_MAX = 8  # pinned memories a character keeps; a new pin unpins the oldest
TOLD_RELIABILITY = 0.7  # a told memory's reliability: the teller's, times this


def _flat(text: object, limit: int) -> str:
    return " ".join(str(text).split())[:limit]


def delta_values(
    *,
    kind: DeltaKind,
    affinity: int = 0,
    trust: int = 0,
    mood: str = "",
    intensity: float = 0.0,
    text: str = "",
    step: int = DELTA_MAX,
) -> dict:
    """A delta's values as stored, each clamped (a frame's and a production's alike; a
    move of affinity or trust to `step`)."""
    return {
        "kind": kind,
        "affinity": int(clamp(affinity, -step, step)),
        "trust": int(clamp(trust, -step, step)),
        "mood": mood,
        "intensity": round(clamp(intensity, -1.0, 1.0), 4),
        "text": _flat(text, FACT_MAX),
    }


def memory_text(text: object) -> str:
    return _flat(text, MEMORY_MAX)


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
    """Store one change of `seat`'s state (an outcome's, or the GM's `by`), clamped (an
    outcome's to DELTA_MAX), and move its cache the way the fold will.

    Raises:
        ValueError: an edge change without a target other than the seat itself.
    """
    if kind == DeltaKind.EDGE and (target is None or target.pk == seat.pk):
        raise ValueError("An edge goes from one character to another.")
    step = 100 if by is not None else DELTA_MAX  # the GM sets a value; an outcome nudges it
    delta = StateDelta.objects.create(
        frame_id=seat.frame_id,
        seat=seat,
        target=target if kind == DeltaKind.EDGE else None,
        outcome=outcome,
        by=by,
        **delta_values(
            kind=kind,
            affinity=affinity,
            trust=trust,
            mood=mood,
            intensity=intensity,
            text=text,
            step=step,
        ),
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
    told_in: Outcome | None = None,
    reliability: float = 1.0,
) -> Memory | None:
    """`seat`'s memory of `outcome`, if it witnessed it, or was told of it by `told_by` in
    the outcome `told_in`: a character never remembers what happened out of its sight.
    A telling counts only if both witnessed `told_in` and the teller remembers `outcome`
    itself (its own memory, not removed). Significance 3 pins it; past PINS_MAX pins the
    oldest pin is let go.

    Returns:
        The memory, or None when the seat did not witness the outcome (nor was told), or
        already remembers it.
    """
    witnesses = [str(w) for w in outcome.witnesses or []]
    if source == MemorySource.WITNESSED and str(seat.pk) not in witnesses:
        return None
    if source == MemorySource.TOLD:
        present = {str(w) for w in (told_in.witnesses or [])} if told_in else set()
        if (
            told_by is None
            or told_by.pk == seat.pk
            or not {str(seat.pk), str(told_by.pk)} <= present
            or not Memory.objects.filter(seat=told_by, outcome=outcome, removed=False).exists()
        ):
            return None
    if Memory.objects.filter(seat=seat, outcome=outcome).exists():
        return None  # remembered already, seen or told
    significance = int(clamp(significance, 0, 3))
    memory = Memory.objects.create(
        frame_id=seat.frame_id,
        seat=seat,
        outcome=outcome,
        text=memory_text(text),
        witnesses=witnesses,
        source=source,
        told_by=told_by,
        reliability=clamp(reliability, 0.0, 1.0),
        significance=significance,
        pinned=significance == 3,
    )
    if memory.pinned:
        pins_cap(seat.pk)
    return memory


def pins_cap(seat_id: object, *, keep: object = None) -> None:
    """At most PINS_MAX pins per character: the least recent ones are let go (unpinned,
    kept, significance unchanged), never `keep` (the memory the GM just pinned, however
    old: their pin wins over the oldest other one)."""
    pins = Memory.objects.filter(seat_id=seat_id, pinned=True).exclude(pk=keep)
    pins = pins.order_by("-created_at", "-id")
    extra = list(pins.values_list("pk", flat=True)[PINS_MAX - (keep is not None) :])
    if extra:
        Memory.objects.filter(pk__in=extra).update(pinned=False)


def name_key(text: str) -> str:
    """A character's name as a model writes it, compared loosely."""
    return " ".join(str(text).strip().strip("[]").split()).casefold()


class HasPk(Protocol):
    pk: Any


C = TypeVar("C", bound=HasPk)  # a frame's Seat, or a production's cast member (Assistant)


@dataclass(frozen=True)
class Allowed(Generic[C]):
    """One witness's changes, as the rules let them through (`changes_allowed`)."""

    character: C
    edges: list[tuple[C, EdgeChange]]
    mood: str
    intensity: float
    learned: list[str]
    memory: str
    significance: int


def changes_allowed(
    proposal: StateProposal, *, characters: Iterable[C], labels: dict, witnesses: set[str]
) -> list[Allowed[C]]:
    """The rules a state pass's proposal goes through, for frames' seats and productions'
    cast members alike: only `witnesses` (their pks, as text) change, each once; names it
    does not know are ignored, and so is an edge toward oneself; facts are capped.
    Clamping is the writer's (`delta_record`, the fold's steps)."""
    by_name = {name_key(labels[c.pk]): c for c in characters if c.pk in labels}
    allowed: list[Allowed[C]] = []
    for change in proposal.characters:
        who = by_name.get(name_key(change.character))
        if (
            who is None
            or str(who.pk) not in witnesses
            or any(a.character.pk == who.pk for a in allowed)
        ):
            continue
        edges = []
        for edge in change.relationships:
            target = by_name.get(name_key(edge.toward))
            if target is not None and target.pk != who.pk:
                edges.append((target, edge))
        allowed.append(
            Allowed(
                character=who,
                edges=edges,
                mood=change.mood or "",
                intensity=change.mood_intensity,
                learned=[f for f in change.learned if f.strip()][:FACTS_PER_OUTCOME],
                memory=change.memory if change.memory.strip() else "",
                significance=change.significance,
            )
        )
    return allowed


@transaction.atomic
def state_apply(
    *, outcome: Outcome, proposal: StateProposal, seats: Iterable[Seat], labels: dict
) -> list[uuid.UUID]:
    """Apply a state pass's proposal under the rules (`changes_allowed`): only the
    outcome's witnesses change; every delta is clamped (`delta_record`).

    Returns:
        The seats whose state changed (listeners told something included).
    """
    seats = list(seats)
    witnesses = {str(w) for w in outcome.witnesses or []}
    changed: list[uuid.UUID] = []
    for change in changes_allowed(proposal, characters=seats, labels=labels, witnesses=witnesses):
        seat = change.character
        changed.append(seat.pk)
        for target, edge in change.edges:
            delta_record(
                seat=seat,
                kind=DeltaKind.EDGE,
                outcome=outcome,
                target=target,
                affinity=edge.affinity,
                trust=edge.trust,
                text=edge.fact,
            )
        if change.mood or change.intensity:
            delta_record(
                seat=seat,
                kind=DeltaKind.MOOD,
                outcome=outcome,
                mood=change.mood,
                intensity=change.intensity,
            )
        for fact in change.learned:
            delta_record(seat=seat, kind=DeltaKind.FACT, outcome=outcome, text=fact)
        if change.memory:
            memory_record(
                seat=seat, outcome=outcome, text=change.memory, significance=change.significance
            )
    by_name = {name_key(labels[s.pk]): s for s in seats if s.pk in labels}
    for telling in proposal.told:
        teller = by_name.get(name_key(telling.teller))
        listener = by_name.get(name_key(telling.listener))
        if teller is None or listener is None:
            continue
        told = told_memory(
            teller=teller, listener=listener, about=telling.about, told_in=outcome, labels=labels
        )
        if told is not None and listener.pk not in changed:
            changed.append(listener.pk)
    return changed


def told_memory(
    *, teller: Seat, listener: Seat, about: str, told_in: Outcome, labels: dict
) -> Memory | None:
    """`listener`'s memory of what `teller` told it in `told_in`, about `about`: the
    teller's own memory that matches it best (of an earlier outcome), less reliable,
    if the teller has one (memory_record checks both were there)."""
    known = memory_about(seat_id=teller.pk, text=about, besides=told_in.pk)
    if known is None or known.outcome is None:
        return None
    return memory_record(
        seat=listener,
        outcome=known.outcome,
        text=f"{labels.get(teller.pk, 'Someone')} told me: {known.text}",
        significance=max(known.significance - 1, 0),
        source=MemorySource.TOLD,
        told_by=teller,
        told_in=told_in,
        reliability=known.reliability * TOLD_RELIABILITY,
    )


@transaction.atomic
def state_edit(
    *,
    seat: Seat,
    by: object,
    mood: str | None = None,
    intensity: float | None = None,
    fact: str = "",
    edges: Iterable[dict] = (),
) -> None:
    """The GM's edit of `seat`'s state to the values given, each change a delta `by` them
    (a GM may move a value any distance; an outcome at most DELTA_MAX). Edges toward seats
    of the same frame only.

    Raises:
        ApplicationError: an unknown mood, or an edge toward the seat itself or a seat not
            in its frame (400 both).
    """
    if mood is not None and mood not in MOOD_NAMES:
        raise ApplicationError("Use one of these moods: " + ", ".join(MOOD_NAMES) + ".")
    targets = {s.pk: s for s in Seat.objects.filter(frame_id=seat.frame_id).exclude(pk=seat.pk)}
    for edge in edges:
        if edge["target"] not in targets:
            raise ApplicationError("An edge goes toward another seat of this frame.")
    if mood is not None or intensity is not None:
        state = SeatState.objects.filter(seat=seat).first()
        now = SeatValues(state.mood, state.intensity) if state else SeatValues()
        delta_record(
            seat=seat,
            kind=DeltaKind.MOOD,
            by=by,
            mood=mood or "",
            intensity=(intensity - now.intensity) if intensity is not None else 0.0,
        )
    if fact.strip():
        delta_record(seat=seat, kind=DeltaKind.FACT, by=by, text=fact)
    for edge in edges:
        found = Edge.objects.filter(source=seat, target_id=edge["target"]).first()
        now_edge = EdgeValues(found.affinity, found.trust) if found else EdgeValues()
        delta_record(
            seat=seat,
            kind=DeltaKind.EDGE,
            by=by,
            target=targets[edge["target"]],
            affinity=edge.get("affinity", now_edge.affinity) - now_edge.affinity,
            trust=edge.get("trust", now_edge.trust) - now_edge.trust,
            text=edge.get("knowledge", ""),
        )
    notify_state_changed(seat.frame_id, [seat.pk])


@transaction.atomic
def memory_edit(*, memory: Memory, by: object, **changes: object) -> Memory:
    """The GM's edit of a memory (`pinned`, `significance`, `text`, `removed`), audited as
    a `MemoryEdit` {field: [before, after]}. The significance pass leaves it alone after
    (`scored`); a pin past PINS_MAX lets the least recent other pin go."""
    memory = Memory.objects.select_for_update().get(pk=memory.pk)
    if "text" in changes:
        changes["text"] = _flat(changes["text"], MEMORY_MAX)
    audit = {k: [getattr(memory, k), v] for k, v in changes.items() if getattr(memory, k) != v}
    if not audit:
        return memory
    for key, value in changes.items():
        setattr(memory, key, value)
    memory.scored = True
    memory.save(update_fields=[*changes, "scored"])
    MemoryEdit.objects.create(memory=memory, by=by, change=audit)
    if memory.pinned and not memory.removed:
        pins_cap(memory.seat_id, keep=memory.pk)
    notify_state_changed(memory.frame_id, [memory.seat_id])
    return memory
