"""A character's snapshot, built from the fold of its deltas (the truth, as a rewind reads
it) and its memories: only what the seat's own character knows. Other characters appear
by their public names; no other seat's persona, memories or state is read at all."""

import tomllib
import uuid
from functools import cache
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from authoring.models import Persona

from ..medium.context import seat_labels
from ..models import Frame, Outcome, Seat
from ..state.levels import MOOD_MODIFIERS, compiled_parameters, level
from ..state.selectors import recallable, state_at
from .schema import FORMAT, VERSION

PERSONA_FIELDS = (
    "name",
    "known_as",
    "universal_truth",
    "internal_truth",
    "external_truth",
    "style",
    "greeting",
    "example_dialogue",
    "tags",
    "avatar_url",
    "imported",
)


@cache
def lmix_version() -> str | None:
    """The project's version (pyproject.toml), None where the file is not shipped (as
    config/archive.py reads it; config is a layer above)."""
    try:
        with open(settings.BASE_DIR / "pyproject.toml", "rb") as file:
            return tomllib.load(file)["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return None


def persona_template(persona: Persona) -> dict[str, Any]:
    """The persona's own fields: the snapshot's template."""
    return {field: getattr(persona, field) for field in PERSONA_FIELDS}


def seat_snapshot(
    *, frame: Frame, seat: Seat, seats: list[Seat], at: Outcome | None = None
) -> dict[str, Any]:
    """`seat`'s snapshot (`SnapshotV1`, schema.py), as of now or of the outcome `at`.

    Args:
        seats: the frame's seats with their personas (`seats_for_prompts`), for names.
    """
    labels = seat_labels(seats)
    values = state_at(seat=seat, upto_seq=at.seq if at else None)
    mood, intensity = values.seat.mood, values.seat.intensity
    affinity = []
    toward = {}
    for target_id, edge in values.edges.items():
        name = labels.get(uuid.UUID(target_id))
        if name is None:  # a seat no longer in the frame
            continue
        affinity.append(
            {
                "character": name,
                "points": edge.affinity,
                "level": level(edge.affinity),
                "trust": edge.trust,
                "knowledge": list(edge.knowledge),
            }
        )
        toward[name] = compiled_parameters(
            mood=mood, intensity=intensity, level_name=level(edge.affinity)
        )
    affinity.sort(key=lambda a: a["character"])
    memories = recallable(seat.pk).order_by("created_at", "id")  # not the GM's removed
    if at is not None:  # as of then: memories of later outcomes are not yet made
        memories = memories.filter(Q(outcome__isnull=True) | Q(outcome__seq__lte=at.seq))
    persona = seat.persona
    return {
        "_snapshot_info": {
            "format": FORMAT,
            "version": VERSION,
            "created_at": timezone.now().isoformat(),
            "character": labels.get(seat.pk, persona.name),
            "source": {
                "frame": frame.name,
                "frame_id": str(frame.pk),
                "seat_id": str(seat.pk),
                "outcome_id": str(at.pk) if at else None,
                "outcome_seq": at.seq if at else None,
            },
            "lmix_version": lmix_version(),
        },
        "persona": persona_template(persona),
        "current_state": {
            "affinity": affinity,
            "mood": {"current": mood, "intensity": intensity},
            "learned_facts": [{"value": fact} for fact in values.seat.facts],
            "memorable_episodes": [
                {
                    "summary": m.text,
                    "significance": m.significance,
                    "pinned": m.pinned,
                    "source": m.source,
                    "told_by": labels.get(m.told_by_id) if m.told_by_id else None,
                    "reliability": m.reliability,
                    "witnesses": [
                        labels[w] for w in _uuids(m.witnesses) if w in labels and w != seat.pk
                    ],
                    "date": m.created_at.isoformat(),
                }
                for m in memories
            ],
        },
        "active_configuration": {
            "compiled_parameters": compiled_parameters(mood=mood, intensity=intensity),
            "active_mood": mood,
            "mood_modifiers": {
                name: round(value * intensity, 4)
                for name, value in MOOD_MODIFIERS.get(mood, {}).items()
            },
            "toward": toward,
            "active_modifiers_applied": [f"{mood}_mood"] if MOOD_MODIFIERS.get(mood) else [],
        },
    }


def _uuids(values: list) -> list[uuid.UUID]:
    out = []
    for value in values or []:
        try:
            out.append(uuid.UUID(str(value)))
        except ValueError:
            continue
    return out
