"""Lifecycles as tables: every allowed move of a row's status, made with one conditional
UPDATE so that of two racing moves exactly one wins."""

from collections.abc import Mapping
from typing import Any

from django.db import models
from django.utils import timezone


def lifecycle_move(
    model: type[models.Model],
    transitions: Mapping[str, set[str]],
    pk: object,
    to: str,
    *,
    only_from: tuple[str, ...] = (),
    where: dict[str, Any] | None = None,
    **fields: Any,
) -> bool:
    """Move row `pk` of `model` to status `to` if `transitions` allows it from where it
    stands now (optionally only from `only_from`, and only if it also matches `where`),
    setting `fields` too. Returns whether this move won.

    Raises:
        ValueError: no status may become `to` (an illegal move).
    """
    sources = [s for s, targets in transitions.items() if to in targets]
    if only_from:
        sources = [s for s in sources if s in only_from]
    if not sources:
        raise ValueError(f"No {model.__name__} may become {to} from {only_from or 'anywhere'}.")
    if any(f.name == "updated_at" for f in model._meta.concrete_fields):
        fields.setdefault("updated_at", timezone.now())
    return bool(
        model.objects.filter(pk=pk, status__in=sources, **(where or {})).update(status=to, **fields)
    )
