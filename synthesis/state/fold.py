"""The fold: a character's state at any point is its deltas applied in order, each step
clamped. The caches (`Edge`, `SeatState`) are updated with the same steps as each delta is
stored; a rewind folds only the deltas up to its outcome. Pure."""

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from ..state_models import AFFINITY_START, TRUST_START, DeltaKind
from .levels import MOOD_NAMES, clamp

KNOWLEDGE_MAX = 12  # facts one character keeps about another, newest kept
FACTS_MAX = 24  # facts a character keeps of what it learned, newest kept
DELTA_MAX = 25  # the most one outcome moves affinity or trust
INTENSITY_START = 0.5


class Delta(Protocol):
    """A `StateDelta` row, or anything with its fields."""

    kind: str
    target_id: object
    affinity: int
    trust: int
    mood: str
    intensity: float
    text: str


@dataclass(frozen=True)
class EdgeValues:
    affinity: int = AFFINITY_START
    trust: int = TRUST_START
    knowledge: tuple[str, ...] = ()


@dataclass(frozen=True)
class SeatValues:
    mood: str = "neutral"
    intensity: float = INTENSITY_START
    facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class CharacterValues:
    edges: dict[str, EdgeValues]  # target seat id → its edge
    seat: SeatValues


def _remember(kept: tuple[str, ...], text: str, most: int) -> tuple[str, ...]:
    if not text or text in kept:
        return kept
    return (*kept, text)[-most:]


def edge_step(values: EdgeValues, *, affinity: int, trust: int, text: str) -> EdgeValues:
    return EdgeValues(
        affinity=int(clamp(values.affinity + affinity, 0, 100)),
        trust=int(clamp(values.trust + trust, 0, 100)),
        knowledge=_remember(values.knowledge, text, KNOWLEDGE_MAX),
    )


def mood_step(values: SeatValues, *, mood: str, intensity: float) -> SeatValues:
    """A mood delta names the new mood ("" keeps it) and moves its intensity."""
    name = mood if mood in MOOD_NAMES else values.mood
    return replace(
        values, mood=name, intensity=round(clamp(values.intensity + intensity, 0.0, 1.0), 4)
    )


def fact_step(values: SeatValues, *, text: str) -> SeatValues:
    return replace(values, facts=_remember(values.facts, text, FACTS_MAX))


def fold(deltas: Iterable[Delta]) -> CharacterValues:
    """One character's state from its deltas (in their order)."""
    edges: dict[str, EdgeValues] = {}
    seat = SeatValues()
    for delta in deltas:
        if delta.kind == DeltaKind.EDGE:
            key = str(delta.target_id)
            edges[key] = edge_step(
                edges.get(key, EdgeValues()),
                affinity=delta.affinity,
                trust=delta.trust,
                text=delta.text,
            )
        elif delta.kind == DeltaKind.MOOD:
            seat = mood_step(seat, mood=delta.mood, intensity=delta.intensity)
        elif delta.kind == DeltaKind.FACT:
            seat = fact_step(seat, text=delta.text)
        elif delta.kind == DeltaKind.RESET:  # a reset (synthesis/snapshots/): start over
            edges, seat = {}, SeatValues()
    return CharacterValues(edges=edges, seat=seat)
