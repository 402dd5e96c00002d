"""Reads of the authoring data: what uses an object, so that deleting it can be refused."""

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from productions.models import Production
from synthesis.models import Frame

from .models import Affiliation, Assistant, LLMModel, Persona, Scenario, World

Authored = World | Scenario | Affiliation | Persona | Assistant | LLMModel


@dataclass(frozen=True)
class User:
    """A production or frame that an authoring object is part of."""

    kind: str  # "production" or "frame"
    id: str
    name: str


def usage_list(*, obj: Authored) -> list[User]:
    """The productions and frames that deleting `obj` would change: for a world or scenario
    the productions set in it; for a persona, assistant or model the productions whose cast
    and the frames whose seats it plays in (a model also where a frame uses it for its
    narrative passes). An affiliation is used by none: its members merely leave it.

    Returns:
        Productions first, then frames, each oldest first (the order a user made them).
    """
    productions, frames = _users(obj)
    return [
        *(User("production", str(p.pk), p.name) for p in productions.order_by("created_at")),
        *(User("frame", str(f.pk), f.name) for f in frames.order_by("created_at")),
    ]


def _users(obj: Authored) -> tuple[QuerySet[Production], QuerySet[Frame]]:
    none = Frame.objects.none()
    if isinstance(obj, World):
        return Production.objects.filter(world=obj), none
    if isinstance(obj, Scenario):
        return Production.objects.filter(scenario=obj), none
    if isinstance(obj, Affiliation):
        return Production.objects.none(), none
    if isinstance(obj, Persona):
        cast = Q(cast__assistant__persona=obj)
        seats = Q(seats__persona=obj) | Q(seats__assistant__persona=obj)
    elif isinstance(obj, Assistant):
        cast = Q(cast__assistant=obj)
        seats = Q(seats__assistant=obj)
    else:
        cast = Q(cast__assistant__model=obj)
        seats = Q(seats__assistant__model=obj) | Q(soft_model=obj) | Q(medium_model=obj)
    # A join through many rows repeats a production: keep each once.
    return (
        Production.objects.filter(pk__in=Production.objects.filter(cast).values("pk")),
        Frame.objects.filter(pk__in=Frame.objects.filter(seats).values("pk")),
    )
