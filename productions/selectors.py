"""Reads of productions: lists, one production with its cast and turns, branches, the cast."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404

from authoring.models import Assistant

from .knowledge import memberships_prefetch
from .models import CastMember, Production, Turn


def production_list(*, owner: AbstractBaseUser) -> QuerySet[Production]:
    return (
        Production.objects.filter(owner=owner)
        .select_related("world", "scenario")
        .prefetch_related("cast")
        .annotate(turn_count=Count("turns", distinct=True))
    )


def production_get(*, owner: AbstractBaseUser, production_id: object) -> Production:
    """The owner's production, or a 404 for anyone else."""
    return get_object_or_404(production_list(owner=owner), pk=production_id)


def cast_load(*, production: Production) -> list[Assistant]:
    """The cast in play order with personas, models and memberships (covert flags and
    groups, all the knowledge compiler reads): two queries, whatever the cast size."""
    members = (
        CastMember.objects.filter(production=production)
        .select_related("assistant__persona", "assistant__model")
        .prefetch_related(memberships_prefetch("assistant__persona__"))
    )
    return [member.assistant for member in members]


def turn_list(*, production: Production) -> list[Turn]:
    return list(production.turns.select_related("assistant__persona").all())


def turn_branch(*, production: Production, leaf_id: object | None) -> list[Turn]:
    """The turns from the root down to `leaf_id` (inclusive), in one query."""
    if leaf_id is None:
        return []
    by_id = {turn.pk: turn for turn in production.turns.defer("directive")}
    branch = []
    current = by_id.get(leaf_id)
    while current is not None:
        branch.append(current)
        current = by_id.get(current.parent_id)
    return branch[::-1]
