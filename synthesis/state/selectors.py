"""Reads of character state: the rows a character's own flesh prompt reads (its edges and
mood prepared, sent in gather's batch: components.py), which of its memories it recalls
for the scene (`recall`, text relevance), and a seat's whole state for its player and the
GM (the state API)."""

import re
import uuid
from collections.abc import Sequence

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection
from django.db.models import FloatField, Q, QuerySet, Value
from django.db.models.expressions import RawSQL

from lmix.errors import ApplicationError
from lmix.prepared import Param, Prepared

from ..frame_selectors import FrameAccess, seats_for_prompts
from ..medium.context import seat_labels
from ..models import Seat
from ..state_models import Edge, Memory, SeatState, SignificancePass, StateDelta, StatePass
from .fold import CharacterValues, SeatValues, fold
from .levels import compiled_parameters, level

# The newest memories, every pin and every match are the candidates of a recall (`recall`).
MEMORY_CANDIDATES = 24
API_MEMORIES = 100  # the newest a seat's state answer lists

OWN_EDGES = Prepared(lambda: Edge.objects.filter(source=Param(Edge, "source")).order_by("target"))
OWN_STATE = Prepared(lambda: SeatState.objects.filter(seat=Param(SeatState, "seat")))


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


# The words of the scene a recall searches for (`recall_terms`): enough for an outcome's
# actions and facts, few enough for a short query.
RECALL_TERMS = 40
RECALL_CANDIDATES = 48  # the rows one recall statement returns, ranked in Python
RELEVANCE_WEIGHT = 2.0  # the most relevant memory's bonus, in significance points
SEARCH_CONFIG = "english"  # PostgreSQL's; the GIN index (migration 0018) is on this one
_WORD = re.compile(r"[^\W_]{3,}")
STOP_WORDS = frozenset(
    _WORD.findall(
        """the and but for with from that this then than they them their there what when where
        who whom which while into onto over under you your yours his her hers its our was were
        are has have had not all any can could would should will just very some does did done
        success partial failure"""
    )
)


def recall_terms(*texts: str) -> list[str]:
    """The distinct words of `texts` a memory may share with the scene, in order (letters
    and digits only: nothing of a query's syntax gets through)."""
    terms: list[str] = []
    for text in texts:
        for word in _WORD.findall(str(text).casefold()):
            if word not in STOP_WORDS and word not in terms:
                terms.append(word)
    return terms[:RECALL_TERMS]


def _relevance(terms: list[str], memories: QuerySet[Memory]) -> tuple[QuerySet[Memory], Q]:
    """`memories` with how well each one's text matches any of `terms` (`relevance`,
    higher is closer; 0 when none), and the condition that it matches at all: PostgreSQL's
    full-text rank (matched with `@@` on the GIN index's expression, migration 0018),
    SQLite's FTS5 bm25 (its table kept by triggers, the same migration). One expression in
    the recall's one statement, whatever the number of memories."""
    if not terms:
        return memories.annotate(relevance=Value(0.0, output_field=FloatField())), Q(pk__in=[])
    if connection.vendor == "postgresql":
        query = SearchQuery(" | ".join(terms), search_type="raw", config=SEARCH_CONFIG)
        vector = SearchVector("text", config=SEARCH_CONFIG)  # the GIN index's expression
        ranked = memories.alias(search=vector).annotate(relevance=SearchRank(vector, query))
        return ranked, Q(search=query)
    match = " OR ".join(f'"{t}"' for t in terms)
    score = RawSQL(
        "COALESCE((SELECT -bm25(synthesis_memory_fts) FROM synthesis_memory_fts"
        " WHERE synthesis_memory_fts MATCH %s"
        " AND synthesis_memory_fts.memory_id = synthesis_memory.id), 0.0)",
        (match,),
        output_field=FloatField(),
    )
    return memories.annotate(relevance=score), Q(relevance__gt=0)


def recallable(seat_id: object) -> QuerySet[Memory]:
    """A character's memories that a prompt may recall and its state shows (the GM's
    removed ones never): the one place to filter what is hidden."""
    return Memory.objects.filter(seat_id=seat_id, removed=False)


def recall(*, seat_id: object, scene: Sequence[str], k: int) -> list[Memory]:
    """The `k` memories of the seat a prompt holds about `scene` (texts: what is being
    done now, what just happened), least important first: every pin, then the rest by
    relevance to the scene plus significance plus recency (the newest counts one more point
    than the oldest candidate; the most relevant RELEVANCE_WEIGHT more than an irrelevant
    one). Only the seat's own memories: its witnessed and told ones.

    One statement: the pins, the newest MEMORY_CANDIDATES and every memory matching the
    scene's words, the best matches first, at most RECALL_CANDIDATES; ranked here."""
    mine = recallable(seat_id)
    newest = mine.order_by("-created_at", "-id").values("pk")[:MEMORY_CANDIDATES]
    ranked, matches = _relevance(recall_terms(*scene), mine)
    rows = list(
        ranked.filter(Q(pinned=True) | Q(pk__in=newest) | matches).order_by(
            "-pinned", "-relevance", "-created_at", "-id"
        )[:RECALL_CANDIDATES]
    )
    return rank_memories(rows, k=k)


def memory_about(*, seat_id: object, text: str, besides: object = None) -> Memory | None:
    """The seat's own memory that best matches `text` (none if no word matches), other
    than its memories of the outcome `besides`: what a character can tell another about."""
    mine = recallable(seat_id).exclude(outcome_id=besides)
    ranked, matches = _relevance(recall_terms(text), mine)
    return ranked.filter(matches).order_by("-relevance", "-created_at", "-id").first()


def rank_memories(candidates: list[Memory], *, k: int) -> list[Memory]:
    """`recall`'s ranking of its candidates (each with its `relevance`, 0 if none)."""
    newest = sorted(candidates, key=lambda m: (m.created_at, str(m.pk)), reverse=True)
    recency = {m.pk: 1 - i / max(len(newest), 1) for i, m in enumerate(newest)}
    best = max((getattr(m, "relevance", 0.0) or 0.0 for m in candidates), default=0.0)

    def score(memory: Memory) -> tuple[bool, float]:
        relevance = getattr(memory, "relevance", 0.0) or 0.0
        related = RELEVANCE_WEIGHT * relevance / best if best > 0 else 0.0
        return memory.pinned, related + memory.significance + recency[memory.pk]

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
    memories = recallable(seat.pk).order_by("-created_at", "-id")[:API_MEMORIES]
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
    if access.is_gm:  # the last state or significance pass that failed, for the GM to see why
        failed = [
            passes.objects.filter(frame=access.frame, status="failed").order_by("-created_at")[:1]
            for passes in (StatePass, SignificancePass)
        ]
        last = max((p for found in failed for p in found), key=lambda p: p.created_at, default=None)
        answer["last_failure"] = last.error if last else None
    return answer
