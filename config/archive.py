"""The backup archive's format (docs/backups.md): which models it holds, in which order,
how rows are serialized, and the manifest that says what the archive is."""

import datetime
import tomllib
from collections.abc import Iterable
from functools import cache
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.serializers import json as json_serializer
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, models
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Q

FORMAT = "lmix-backup"
VERSION = 1
MANIFEST = "manifest.json"
DATA_DIR = "data/"
MEDIA_DIR = "media/"

# Never archived: `migrate` makes content types and permissions itself (rows that point to
# them are written with natural keys), and sessions are worthless in another database.
SKIPPED = {"contenttypes.contenttype", "auth.permission", "sessions.session"}
# Rows `migrate` itself creates: a freshly migrated database holds them, so they are no
# "data" when deciding whether a database is empty; an instance restore replaces them with
# the archive's, exactly (admins' edits kept); the next `migrate` brings them to the files
# this LMiX ships, as after an upgrade.
MIGRATE_MADE: dict[str, Q] = {"synthesis.skill": Q(scope="platform")}
# Written with natural keys ((app, model), (codename, app, model)) so they resolve in
# another database whose ids differ.
NATURAL_KEYED = {"contenttypes.contenttype", "auth.permission"}
# Fields that may name an uploaded file (a URL under MEDIA_URL): the archive carries those
# files (authoring/services.py::persona_avatar_set stores avatars there).
MEDIA_FIELDS: dict[str, tuple[str, ...]] = {"authoring.persona": ("avatar_url",)}


class BackupError(Exception):
    """A backup or restore that cannot be made; the message says why and what to do."""


def label(model: type[models.Model]) -> str:
    return model._meta.label_lower


def user_label() -> str:
    return settings.AUTH_USER_MODEL.lower()


def lmix_version() -> str | None:
    """The project's version (pyproject.toml), None where the file is not shipped."""
    try:
        with open(settings.BASE_DIR / "pyproject.toml", "rb") as file:
            return tomllib.load(file)["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return None


@cache
def archived_models() -> tuple[type[models.Model], ...]:
    """Every concrete model of every installed app but SKIPPED, referenced models first
    (a cycle, such as a liquid's narrative and a narrative's pass, is broken in app order;
    foreign keys are checked at the end of a restore, so the order is only for reading)."""
    found = [
        model
        for model in apps.get_models()
        if label(model) not in SKIPPED and model._meta.managed and not model._meta.proxy
    ]
    deps = {
        model: {
            field.related_model
            for field in fk_fields(model)
            if field.related_model in found and field.related_model is not model
        }
        for model in found
    }
    ordered: list[type[models.Model]] = []
    while len(ordered) < len(found):
        remaining = [m for m in found if m not in ordered]
        ready = [m for m in remaining if deps[m] <= set(ordered)]
        ordered.extend(ready or [min(remaining, key=lambda m: len(deps[m] - set(ordered)))])
    return tuple(ordered)


def fk_fields(model: type[models.Model]) -> list[models.ForeignKey]:
    """The model's foreign keys (one-to-one included)."""
    return [field for field in model._meta.concrete_fields if isinstance(field, models.ForeignKey)]


def has_auto_pk(model: type[models.Model]) -> bool:
    return isinstance(model._meta.pk, models.AutoField)


def auto_m2m_tables(model: type[models.Model]) -> list[str]:
    """The tables of the model's many-to-many fields that Django made itself (a user's
    groups); models of their own (memberships, cast members) are archived as models."""
    return [
        field.remote_field.through._meta.db_table
        for field in model._meta.local_many_to_many
        if field.remote_field.through._meta.auto_created
    ]


def migration_state() -> dict[str, list[str]]:
    """The latest applied migrations of each app (those no other applied migration of the
    app follows), as the archive's manifest records them."""
    applied = set(MigrationRecorder(connection).applied_migrations())
    graph = MigrationLoader(connection, ignore_no_migrations=True).graph
    latest: dict[str, list[str]] = {}
    for node in sorted(applied):
        if node not in graph.nodes:
            continue  # applied once, gone from disk (a squashed migration's parts)
        children = graph.node_map[node].children
        if not any(child in applied and child[0] == node[0] for child in children):
            latest.setdefault(node[0], []).append(node[1])
    return latest


def migration_refusal(archived: dict[str, list[str]]) -> str | None:
    """Why an archive made at `archived` cannot load here (a migration this database has
    not applied), or None."""
    applied = set(MigrationRecorder(connection).applied_migrations())
    on_disk = MigrationLoader(connection, ignore_no_migrations=True).disk_migrations
    for app_label, names in sorted(archived.items()):
        for name in names:
            if (app_label, name) in applied:
                continue
            if (app_label, name) in on_disk:
                return (
                    f"The archive was made after migration {app_label}.{name}, which this "
                    "database has not applied: run `manage.py migrate` first."
                )
            return (
                f"The archive was made by a newer LMiX (its migration {app_label}.{name} is "
                "unknown here): upgrade LMiX first, then restore."
            )
    return None


class _Encoder(DjangoJSONEncoder):
    """Times to the microsecond (Django's encoder keeps milliseconds): rows ordered by
    their creation time keep their order after a restore."""

    def default(self, o: Any) -> Any:
        if isinstance(o, datetime.datetime | datetime.time):
            text = o.isoformat()
            return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text
        return super().default(o)


class Serializer(json_serializer.Serializer):
    """Django's JSON serializer, natural keys only for NATURAL_KEYED models (everything
    else by id, so a restore can map a user's rows to another account), each row passed
    through `transform` (what a per-user archive leaves out) before it is written."""

    def __init__(self, transform=None) -> None:
        super().__init__()
        self.transform = transform

    def serialize(self, queryset, **options: Any) -> Any:
        return super().serialize(queryset, cls=_Encoder, **options)

    def handle_fk_field(self, obj: models.Model, field: models.Field) -> None:
        self.use_natural_foreign_keys = label(field.related_model) in NATURAL_KEYED
        super().handle_fk_field(obj, field)

    def handle_m2m_field(self, obj: models.Model, field: models.Field) -> None:
        self.use_natural_foreign_keys = label(field.related_model) in NATURAL_KEYED
        super().handle_m2m_field(obj, field)

    def get_dump_object(self, obj: models.Model) -> dict[str, Any]:
        row = super().get_dump_object(obj)
        return self.transform(row) if self.transform else row


def media_names(model: type[models.Model], rows: Iterable[dict[str, Any]]) -> set[str]:
    """The uploaded files (names under MEDIA_ROOT) that serialized rows point to."""
    names: set[str] = set()
    for field in MEDIA_FIELDS.get(label(model), ()):
        for row in rows:
            value = row["fields"].get(field) or ""
            if value.startswith(settings.MEDIA_URL):
                names.add(value.removeprefix(settings.MEDIA_URL))
    return names
