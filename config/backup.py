"""`manage.py backup`: the whole instance's or one user's rows and uploads as a versioned
zip archive (docs/backups.md). Restoring is config/restore.py; the format config/archive.py.

Periodic snapshots of live frames are not made here: they use the character snapshot
format, written by a beat task of their own (synthesis/snapshots/, docs/snapshots.md);
this module archives databases, not frames.
"""

import io
import json
import os
import zipfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, models, transaction
from django.utils import timezone

from .archive import (
    DATA_DIR,
    FORMAT,
    MANIFEST,
    MEDIA_DIR,
    SKIPPED,
    VERSION,
    BackupError,
    Serializer,
    archived_models,
    fk_fields,
    label,
    lmix_version,
    media_names,
    migration_state,
    user_label,
)

# Not in a per-user archive: instance-wide rows (groups, the admin's log).
USER_SCOPE_SKIPPED = {"auth.group", "admin.logentry"}
# Write-only secrets a per-user archive never holds: the field is written empty.
USER_SCOPE_BLANKED: dict[str, dict[str, Any]] = {"lmix.llmmodel": {"api_key_encrypted": ""}}
CHUNK = 500

Row = dict[str, Any]


def _seat_detached(row: Row) -> Row:
    """A seat whose player (another account) or assistant was left out is open again, as
    its constraint asks (`seat_controller_matches_player`)."""
    fields = row["fields"]
    if fields["controller"] == "human" and fields["user"] is None:
        fields["controller"] = "open"
    if fields["controller"] == "ai" and fields["assistant"] is None:
        fields["controller"] = "open"
    return row


# What else a row needs once a per-user archive cleared references out of its scope.
USER_SCOPE_FIXUPS: dict[str, Callable[[Row], Row]] = {"synthesis.seat": _seat_detached}


def user_scope(user: models.Model) -> dict[str, set[str]]:
    """Which rows (model label -> primary keys, as text) belong to `user`'s archive.

    A row belongs if its `owner` is the user, or if a cascading foreign key ties it to a
    row that belongs (a frame's seats, a seat's narratives, …), and only while every
    required foreign key it has points into the archive: another player's ban from the
    user's frame (it names that account) stays out, and so does the user's own seat in
    someone else's frame. Optional references out of the archive (another player on a
    seat, the author of a line of table talk) are cleared when the row is written.
    """
    users = user_label()
    chosen = [
        model
        for model in archived_models()
        if label(model) not in USER_SCOPE_SKIPPED and label(model) != users
    ]
    refs: dict[str, list[models.ForeignKey]] = {}
    rows: dict[str, dict[str, tuple[str | None, ...]]] = {}
    for model in chosen:
        refs[label(model)] = [f for f in fk_fields(model) if label(f.related_model) not in SKIPPED]
        names = [f.attname for f in refs[label(model)]]
        rows[label(model)] = {
            str(pk): tuple(None if v is None else str(v) for v in values)
            for pk, *values in model._base_manager.values_list("pk", *names).iterator()
        }
    included: dict[str, set[str]] = {users: {str(user.pk)}} | {key: set() for key in rows}

    def points_in(field: models.ForeignKey, value: str | None) -> bool:
        return value is not None and value in included.get(label(field.related_model), ())

    grew = True
    while grew:
        grew = False
        for key, table in rows.items():
            for pk, values in table.items():
                if pk in included[key]:
                    continue
                for field, value in zip(refs[key], values, strict=True):
                    owned = field.name == "owner" and label(field.related_model) == users
                    cascades = field.remote_field.on_delete is models.CASCADE
                    if (owned or cascades) and points_in(field, value):
                        included[key].add(pk)
                        grew = True
                        break
    shrank = True
    while shrank:
        shrank = False
        for key, table in rows.items():
            for pk in list(included[key]):
                values = table[pk]
                for field, value in zip(refs[key], values, strict=True):
                    if not field.null and not points_in(field, value):
                        included[key].discard(pk)
                        shrank = True
                        break
    return included


def _user_transform(model: type[models.Model], scope: dict[str, set[str]]):
    """The row transform of a per-user archive: references out of the archive cleared,
    secrets blanked, the model's fix-up applied."""
    key = label(model)
    refs = [f for f in fk_fields(model) if label(f.related_model) not in SKIPPED]
    blanked = USER_SCOPE_BLANKED.get(key, {})
    fixup = USER_SCOPE_FIXUPS.get(key)

    def transform(row: Row) -> Row:
        fields = row["fields"]
        for field in refs:
            value = fields.get(field.name)
            if value is not None and str(value) not in scope.get(label(field.related_model), ()):
                fields[field.name] = None
        fields.update(blanked)
        if key == user_label():
            # The instance's groups and permissions are no part of one user's data.
            fields["groups"], fields["user_permissions"] = [], []
        return fixup(row) if fixup else row

    return transform


def _rows(model: type[models.Model], pks: set[str] | None) -> Iterator[models.Model]:
    manager = model._base_manager.order_by("pk")
    if pks is None:
        yield from manager.iterator(chunk_size=2000)
        return
    ordered = sorted(pks)
    for start in range(0, len(ordered), CHUNK):
        yield from manager.filter(pk__in=ordered[start : start + CHUNK])


class _Collecting:
    """Wraps a transform to count the rows written and keep the media names they hold."""

    def __init__(self, model: type[models.Model], transform) -> None:
        self.model, self.transform = model, transform
        self.count = 0
        self.media: set[str] = set()

    def __call__(self, row: Row) -> Row:
        row = self.transform(row) if self.transform else row
        self.count += 1
        self.media |= media_names(self.model, [row])
        return row


def _write_model(
    archive: zipfile.ZipFile, model: type[models.Model], objects: Iterable, transform
) -> _Collecting:
    collecting = _Collecting(model, transform)
    with archive.open(f"{DATA_DIR}{label(model)}.json", "w", force_zip64=True) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8")
        Serializer(transform=collecting).serialize(objects, stream=text, indent=None)
        text.flush()
        text.detach()
    return collecting


def backup_write(*, path: Path, username: str | None = None) -> dict[str, Any]:
    """Write the archive to `path` (a zip; only readable by its owner): the whole instance,
    or only the account `username` and what it owns. One consistent read (a transaction;
    on PostgreSQL repeatable read). Returns the manifest.

    Raises:
        BackupError: no such user, or the path exists or cannot be written.
    """
    user = None
    if username is not None:
        user = get_user_model()._base_manager.filter(username=username).first()
        if user is None:
            raise BackupError(f"There is no user named “{username}”.")
    path = Path(path)
    if path.exists():
        raise BackupError(f"{path} exists already: choose another --output.")
    partial = path.with_name(path.name + ".partial")
    fresh = not connection.in_atomic_block
    try:
        with transaction.atomic():
            if fresh and connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            manifest = _write(partial, user)
        os.chmod(partial, 0o600)
        os.replace(partial, path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise BackupError(f"Cannot write {path}: {error.strerror or error}.") from error
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return manifest


def _write(path: Path, user: models.Model | None) -> dict[str, Any]:
    scope = user_scope(user) if user is not None else None
    counts: dict[str, int] = {}
    media: set[str] = set()
    # Owner-only from the start: the archive holds password hashes and (instance) keys.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with (
        os.fdopen(descriptor, "wb") as file,
        zipfile.ZipFile(file, "w", compression=zipfile.ZIP_DEFLATED) as archive,
    ):
        for model in archived_models():
            key = label(model)
            if scope is not None and key not in scope:
                continue
            pks = scope[key] if scope is not None else None
            transform = _user_transform(model, scope) if scope is not None else None
            written = _write_model(archive, model, _rows(model, pks), transform)
            counts[key] = written.count
            media |= written.media
        missing = []
        for name in sorted(media):
            source = Path(settings.MEDIA_ROOT) / name
            if source.is_file():
                archive.write(source, f"{MEDIA_DIR}{name}")
            else:
                missing.append(name)
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "lmix_version": lmix_version(),
            "created_at": timezone.now().isoformat(),
            "scope": "user" if user is not None else "instance",
            "user": {"id": user.pk, "username": user.get_username()} if user else None,
            "database": connection.vendor,
            "migrations": migration_state(),
            "models": list(counts),
            "counts": counts,
            "media": sorted(set(media) - set(missing)),
            "media_missing": missing,
        }
        archive.writestr(MANIFEST, json.dumps(manifest, indent=2))
    return manifest
