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
    field: str = "status",
    **fields: Any,
) -> bool:
    """Move row `pk` of `model` to status `to` if `transitions` allows it from where it
    stands now (optionally only from `only_from`, and only if it also matches `where`),
    setting `fields` too. Returns whether this move won. `field` is the status column
    (a scene's summaries have their own: `summary_status`).

    Raises:
        ValueError: no status may become `to` (an illegal move).
    """
    sources = lifecycle_sources(model, transitions, to, only_from)
    _touch(model, fields)
    return bool(
        model.objects.filter(pk=pk, **{f"{field}__in": sources}, **(where or {})).update(
            **{field: to}, **fields
        )
    )


def lifecycle_move_all(
    rows: models.QuerySet,
    transitions: Mapping[str, set[str]],
    to: str,
    *,
    only_from: tuple[str, ...] = (),
    **fields: Any,
) -> int:
    """`lifecycle_move` of every row of `rows` whose status may become `to` (optionally
    only from `only_from`), in one UPDATE. Returns how many moved.

    Raises:
        ValueError: no status may become `to` (an illegal move).
    """
    sources = lifecycle_sources(rows.model, transitions, to, only_from)
    _touch(rows.model, fields)
    return rows.filter(status__in=sources).update(status=to, **fields)


def lifecycle_sources(
    model: type[models.Model],
    transitions: Mapping[str, set[str]],
    to: str,
    only_from: tuple[str, ...] = (),
) -> list[str]:
    """The statuses a row may become `to` from (only those of `only_from`, if given).

    Raises:
        ValueError: none: an illegal move.
    """
    sources = [s for s, targets in transitions.items() if to in targets]
    if only_from:
        sources = [s for s in sources if s in only_from]
    if not sources:
        raise ValueError(f"No {model.__name__} may become {to} from {only_from or 'anywhere'}.")
    return sources


def _touch(model: type[models.Model], fields: dict[str, Any]) -> None:
    if any(f.name == "updated_at" for f in model._meta.concrete_fields):
        fields.setdefault("updated_at", timezone.now())
