"""Query helpers the ORM lacks."""

from typing import TypeVar

from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)


def rows_found(queryset: QuerySet[M]) -> list[M]:
    """The rows of a query that almost always finds none, such as a sweep's: their ids
    first, then, only if there are any, the rows themselves (with the queryset's
    `select_related` and `defer`). Every process sweeps every second or two, and building a
    wide select costs more than finding nothing."""
    ids = list(queryset.values_list("pk", flat=True))
    return list(queryset.filter(pk__in=ids)) if ids else []
