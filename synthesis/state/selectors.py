"""Reads of character state: the rows a character's own flesh prompt reads (prepared, sent
in gather's batch: components.py), which of its memories it recalls, and a seat's whole
state for its player and the GM (the state API)."""

import uuid

from lmix.errors import ApplicationError
from lmix.prepared import Param, Prepared

from ..frame_selectors import FrameAccess, seats_for_prompts
from ..medium.context import seat_labels
from ..models import Seat
from ..state_models import Edge, Memory, SeatState, StateDelta, StatePass
from .fold import CharacterValues, SeatValues, fold
from .levels import compiled_parameters, level

# The newest memories and every pin are the candidates a prompt recalls from (`recall`).
MEMORY_CANDIDATES = 24
API_MEMORIES = 100  # the newest a seat's state answer lists

OWN_EDGES = Prepared(lambda: Edge.objects.filter(source=Param(Edge, "source")).order_by("target"))
OWN_STATE = Prepared(lambda: SeatState.objects.filter(seat=Param(SeatState, "seat")))
OWN_MEMORIES = Prepared(
    lambda: Memory.objects.filter(seat=Param(Memory, "seat")).order_by(
        "-pinned", "-created_at", "-id"
    )[:MEMORY_CANDIDATES]
)


def state_at(*, seat: Seat, upto_seq: int | None = None) -> CharacterValues:
    """The seat's state as its deltas fold, all of them or only up to the outcome numbered
    `upto_seq` (the GM's edits made before that outcome's next one stay): what a rewind to
    that outcome will show, without deleting anything."""
    deltas = StateDelta.objects.filter(seat=seat).select_related("outcome").order_by("id")
    if upto_seq is not None:
        later = StateDelta.objects.filter(seat=seat, outcome__seq__gt=upto_seq).order_by("id")
        first_later = later.values_list("id", flat=True).first()
        deltas = deltas.exclude(outcome__seq__gt=upto_seq)
        if first_later is not None:  # a GM edit after the rewound outcomes goes with them
            deltas = deltas.exclude(outcome__isnull=True, id__gt=first_later)
    return fold(deltas)


def recall(candidates: list[Memory], *, k: int) -> list[Memory]:
    """The `k` memories a prompt holds, least important first: every pin, then the rest by
    significance plus recency (the newest counts one more point than the oldest).

    The seam for text relevance: ranking by what the scene is about (PostgreSQL full-text
    search, SQLite FTS5) would add a third term here, its score read with the candidates.
    """
    newest = sorted(candidates, key=lambda m: (m.created_at, str(m.pk)), reverse=True)
    recency = {m.pk: 1 - i / max(len(newest), 1) for i, m in enumerate(newest)}

    def score(memory: Memory) -> tuple[bool, float]:
        return memory.pinned, memory.significance + recency[memory.pk]

    return sorted(sorted(candidates, key=score, reverse=True)[:k], key=score)


def seat_state(*, access: FrameAccess, seat_id: object) -> dict:
    """A seat's character state, for its current player or the frame's GM.

    Returns:
        The `SeatStateAnswer` (synthesis/answers.py).
    Raises:
        ApplicationError: no such seat in the frame, or not the caller's to read (404 both,
            as the character sheet: another's state is not even said to exist).
    """
    seat_pk = uuid.UUID(str(seat_id))
    if not access.is_gm and seat_pk not in access.seat_ids:
        raise ApplicationError("No such seat in this frame.", status_code=404)
    seats = seats_for_prompts(frame=access.frame)
    seat = next((s for s in seats if s.pk == seat_pk), None)
    if seat is None:
        raise ApplicationError("No such seat in this frame.", status_code=404)
    labels = seat_labels(seats)
    state = SeatState.objects.filter(seat=seat).first()
    values = SeatValues(state.mood, state.intensity, tuple(state.facts)) if state else SeatValues()
    edges = Edge.objects.filter(source=seat).select_related("last_outcome").order_by("target")
    memories = Memory.objects.filter(seat=seat).order_by("-created_at", "-id")[:API_MEMORIES]
    answer: dict = {
        "seat": str(seat.pk),
        "mood": {
            "name": values.mood,
            "intensity": values.intensity,
            "parameters": compiled_parameters(mood=values.mood, intensity=values.intensity),
        },
        "facts": list(values.facts),
        "edges": [
            {
                "target": str(edge.target_id),
                "name": labels.get(edge.target_id, "Someone"),
                "affinity": edge.affinity,
                "trust": edge.trust,
                "level": level(edge.affinity),
                "knowledge": list(edge.knowledge),
                "last_outcome_seq": edge.last_outcome.seq if edge.last_outcome else None,
                "last_interaction_at": (
                    edge.last_interaction_at.isoformat() if edge.last_interaction_at else None
                ),
            }
            for edge in edges
            if edge.target_id in labels
        ],
        "memories": [
            {
                "id": str(m.pk),
                "text": m.text,
                "outcome": str(m.outcome_id) if m.outcome_id else None,
                "source": m.source,
                "told_by": labels.get(m.told_by_id) if m.told_by_id else None,
                "reliability": m.reliability,
                "significance": m.significance,
                "pinned": m.pinned,
                "created_at": m.created_at.isoformat(),
            }
            for m in memories
        ],
    }
    if access.is_gm:  # the last state pass that failed, for the GM to see why
        failed = (
            StatePass.objects.filter(frame=access.frame, status="failed")
            .order_by("-created_at")
            .first()
        )
        answer["last_failure"] = failed.error if failed else None
    return answer
