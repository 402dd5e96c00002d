"""What uses an authoring object, so that deleting it can be refused.

Productions and frames are built on authoring data, not the other way round: each app
that uses it registers a finder (`uses`) that names its own rows using an object.
"""

from collections.abc import Callable
from dataclasses import dataclass

from lmix.models import LLMModel

from .models import Affiliation, Assistant, Persona, Scenario, World

Authored = World | Scenario | Affiliation | Persona | Assistant | LLMModel


@dataclass(frozen=True)
class User:
    """A production or frame that an authoring object is part of."""

    kind: str  # "production" or "frame"
    id: str
    name: str


# (object) → its users in one app, oldest first.
Finder = Callable[[Authored], list[User]]
_finders: list[Finder] = []


def uses(finder: Finder) -> Finder:
    """Register an app's finder (once; apps register in INSTALLED_APPS order, so
    productions come before frames)."""
    if finder not in _finders:
        _finders.append(finder)
    return finder


def usage_list(*, obj: Authored) -> list[User]:
    """The productions and frames that deleting `obj` would change: for a world or scenario
    the productions set in it; for a persona, assistant or model the productions whose cast
    and the frames whose seats it plays in (a model also where a frame uses it for its
    narrative passes). An affiliation is used by none: its members merely leave it.

    Returns:
        Productions first, then frames, each oldest first (the order a user made them).
    """
    return [user for finder in _finders for user in finder(obj)]
