"""The seam between a prompt outside the medium pass (an AI seat's, ai_seats.py) and the
character's own state: synthesis/state/ registers its reader here when the app starts
(apps.py imports it). The state builds on the medium pass, which calls the AI seats, so
they cannot import it themselves (lint-imports: no cycles)."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

Reader = Callable[..., str]  # (*, seat, labels, scene) -> the prompt's state sections
_readers: list[Reader] = []


def own_state_register(reader: Reader) -> None:
    _readers[:] = [reader]


def own_state_text(*, seat: Any, labels: Mapping, scene: Sequence[str]) -> str:
    """The seat's own memories, relationships and mood as prompt sections ("" if none)."""
    return _readers[0](seat=seat, labels=labels, scene=scene) if _readers else ""
