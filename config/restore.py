"""`manage.py restore`: load a backup archive (config/backup.py) in one transaction, with
its uploads; nothing is left behind when it fails (docs/backups.md)."""

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management.color import no_style
from django.core.serializers.base import DeserializationError, DeserializedObject
from django.db import DatabaseError, connection, models, transaction

from .archive import (
    DATA_DIR,
    FORMAT,
    MANIFEST,
    MEDIA_DIR,
    MIGRATE_MADE,
    VERSION,
    BackupError,
    archived_models,
    auto_m2m_tables,
    fk_fields,
    has_auto_pk,
    label,
    migration_refusal,
    user_label,
)

# What an uploaded file's name may look like (avatars/<hex>.png): no way out of MEDIA_ROOT.
_MEDIA_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


@dataclass
class Restored:
    """What a restore created (or, dry, would create)."""

    scope: str
    counts: dict[str, int] = field(default_factory=dict)
    media: list[str] = field(default_factory=list)
    username: str | None = None
    replaced: bool = False


class _DryRun(Exception):
    """Rolls a dry run's transaction back once everything has been loaded and checked."""


def manifest_read(archive: zipfile.ZipFile) -> dict[str, Any]:
    """The archive's manifest, checked: its format, a version this LMiX reads, and no
    migration this database lacks.

    Raises:
        BackupError: saying which of these fails.
    """
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except KeyError:
        raise BackupError(f"Not an LMiX backup: the archive has no {MANIFEST}.") from None
    except (ValueError, UnicodeDecodeError):
        raise BackupError(f"Not an LMiX backup: its {MANIFEST} is not JSON.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise BackupError(f"Not an LMiX backup: its format is {found!r}, not {FORMAT!r}.")
    version = manifest.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BackupError(f"Unknown backup format version {version!r}.")
    if version > VERSION:
        raise BackupError(
            f"The archive is format version {version}, made by a newer LMiX; this one reads "
            f"up to version {VERSION}. Upgrade LMiX first, then restore."
        )
    if manifest.get("scope") not in ("instance", "user"):
        raise BackupError(f"Unknown backup scope {manifest.get('scope')!r}.")
    listed = manifest.get("models")
    if not isinstance(listed, list) or not all(isinstance(key, str) for key in listed):
        raise BackupError(f"The archive's {MANIFEST} lists no models.")
    if manifest["scope"] == "user" and not isinstance(manifest.get("user"), dict):
        raise BackupError(f"The per-user archive's {MANIFEST} names no user.")
    migrations = manifest.get("migrations")
    if not isinstance(migrations, dict) or not all(
        isinstance(names, list) and all(isinstance(name, str) for name in names)
        for names in migrations.values()
    ):
        raise BackupError(f"The archive's {MANIFEST} has no migration state.")
    refusal = migration_refusal(migrations)
    if refusal:
        raise BackupError(refusal)
    return manifest


def _model(key: str) -> type[models.Model]:
    try:
        return apps.get_model(key)
    except (LookupError, ValueError):
        raise BackupError(
            f"The archive holds rows of {key!r}, a model this LMiX does not have."
        ) from None


def _rows(archive: zipfile.ZipFile, key: str) -> list[dict[str, Any]]:
    try:
        rows = json.loads(archive.read(f"{DATA_DIR}{key}.json"))
    except KeyError:
        raise BackupError(f"The archive lacks the rows of {key} its manifest lists.") from None
    except (ValueError, UnicodeDecodeError):
        raise BackupError(f"The rows of {key} in the archive are not JSON.") from None
    if not isinstance(rows, list):
        raise BackupError(f"The rows of {key} in the archive are not a list.")
    return rows


def _insert(obj: DeserializedObject) -> None:
    """Insert one row as it was stored (raw: no timestamps renewed, no signals acting)."""
    obj.save(force_insert=True)


def _data_tables() -> list[str]:
    tables = []
    for model in archived_models():
        tables += [model._meta.db_table, *auto_m2m_tables(model)]
    return [*tables, "django_session"]


def _instance_prepare(*, replace: bool) -> bool:
    """An instance restore starts from an empty database: refuse one holding data unless
    `replace`, which deletes it here, in the restore's transaction (a failed restore keeps
    it). Rows `migrate` made are replaced by the archive's in any case. Returns whether
    data was deleted."""
    held = []
    for model in archived_models():
        rows = model._base_manager.all()
        if label(model) in MIGRATE_MADE:
            rows = rows.exclude(MIGRATE_MADE[label(model)])
        count = rows.count()
        if count:
            meta = model._meta
            held.append(f"{count} {meta.verbose_name if count == 1 else meta.verbose_name_plural}")
    if held and not replace:
        raise BackupError(
            "The database already holds data ("
            + ", ".join(held[:5])
            + (", …" if len(held) > 5 else "")
            + "). Restore an instance archive into an empty database (a new one, after "
            "`manage.py migrate`), or pass --replace to delete everything first."
        )
    if held:
        quote = connection.ops.quote_name
        with connection.cursor() as cursor:
            for table in _data_tables():
                cursor.execute(f"DELETE FROM {quote(table)}")
    for key, rows in MIGRATE_MADE.items():
        apps.get_model(key)._base_manager.filter(rows).delete()
    return bool(held)


def _clashes(manifest_models: list[str], archive: zipfile.ZipFile) -> list[str]:
    """Rows of the archive (kept by primary key) that this database holds already."""
    found = []
    for key in manifest_models:
        model = _model(key)
        if has_auto_pk(model) or key == user_label():
            continue  # these get fresh keys
        pks = [row.get("pk") for row in _rows(archive, key)]
        for start in range(0, len(pks), 500):
            for obj in model._base_manager.filter(pk__in=pks[start : start + 500])[:5]:
                found.append(f"{model._meta.verbose_name} “{obj}” ({obj.pk})")
    return found


def _user_target(manifest: dict[str, Any], archive: zipfile.ZipFile, as_user: str | None):
    """The account a per-user archive's rows go to: `as_user`, or a new one made from the
    archive's (its username free; no staff or superuser rights)."""
    User = get_user_model()
    if as_user is not None:
        target = User._base_manager.filter(username=as_user).first()
        if target is None:
            raise BackupError(f"There is no user named “{as_user}” to restore as.")
        return target, False
    username = (manifest.get("user") or {}).get("username")
    if User._base_manager.filter(username=username).exists():
        raise BackupError(
            f"A user named “{username}” already exists here. Delete that account first to "
            f"restore it, or restore into an existing account with --as-user USERNAME."
        )
    rows = _rows(archive, user_label())
    if len(rows) != 1:
        raise BackupError("A per-user archive holds exactly one account.")
    rows[0]["pk"] = None
    rows[0]["fields"].update(is_staff=False, is_superuser=False, groups=[], user_permissions=[])
    (obj,) = serializers.deserialize("python", rows)
    _insert(obj)
    return obj.object, True


def _user_rows(
    model: type[models.Model],
    rows: list[dict[str, Any]],
    *,
    archived_user: Any,
    target: models.Model,
    new_pks: dict[str, dict[Any, Any]],
) -> list[dict[str, Any]]:
    """A per-user archive's rows, pointed at `target`: references to the archived account
    become references to it (any other account id is dropped: it means nothing here),
    integer keys are left to this database, and references to such rows follow them."""
    users = user_label()
    for row in rows:
        fields = row["fields"]
        for fk in fk_fields(model):
            name, value = fk.name, fields.get(fk.name)
            if value is None:
                continue
            target_key = label(fk.related_model)
            if target_key == users:
                fields[name] = target.pk if value == archived_user else None
            elif has_auto_pk(fk.related_model):
                # Loaded earlier (archived_models puts referenced models first).
                if value not in new_pks.get(target_key, {}):
                    raise BackupError(
                        f"A row of {label(model)} points to a row of {target_key} that the "
                        "archive does not hold."
                    )
                fields[name] = new_pks[target_key][value]
        if has_auto_pk(model):
            row["old_pk"], row["pk"] = row.get("pk"), None
    return rows


def _llm_models_renamed(model: type[models.Model], rows: list[dict[str, Any]], target) -> None:
    """Restoring into an existing account: its models keep their names and its default;
    restored models with the same name get “(restored)”."""
    if label(model) != "lmix.llmmodel":
        return
    taken = set(model._base_manager.filter(owner=target).values_list("name", flat=True))
    has_default = model._base_manager.filter(owner=target, is_default=True).exists()
    for row in rows:
        fields = row["fields"]
        name = fields["name"]
        suffix = 1
        while fields["name"] in taken:
            fields["name"] = f"{name} (restored{'' if suffix == 1 else f' {suffix}'})"
            suffix += 1
        taken.add(fields["name"])
        if has_default:
            fields["is_default"] = False


def _load(
    archive: zipfile.ZipFile, manifest: dict[str, Any], *, target=None, as_user: bool = False
) -> dict[str, int]:
    counts: dict[str, int] = {}
    new_pks: dict[str, dict[Any, Any]] = {}
    archived_user = (manifest.get("user") or {}).get("id")
    for key in manifest["models"]:
        if target is not None and key == user_label():
            continue  # made (or chosen) first
        model = _model(key)
        rows = _rows(archive, key)
        if target is not None:
            rows = _user_rows(
                model, rows, archived_user=archived_user, target=target, new_pks=new_pks
            )
            if as_user:
                _llm_models_renamed(model, rows, target)
        old_pks = [row.pop("old_pk", None) for row in rows]
        try:
            objects = serializers.deserialize("python", rows)
            for obj, old_pk in zip(objects, old_pks, strict=True):
                _insert(obj)
                if old_pk is not None:
                    new_pks.setdefault(key, {})[old_pk] = obj.object.pk
        except (DeserializationError, DatabaseError, ValueError) as error:
            raise BackupError(f"Cannot restore the rows of {key}: {error}") from error
        counts[key] = len(rows)
    return counts


def _media_write(archive: zipfile.ZipFile, names: list[str], written: list[str]) -> None:
    """Put the archive's uploads back under MEDIA_ROOT, same names; `written` collects what
    was made, so a failure can remove it."""
    for name in names:
        parts = name.split("/")
        if not parts or any(not p or p in (".", "..") or set(p) - _MEDIA_CHARS for p in parts):
            raise BackupError(f"The archive names an upload oddly: {name!r}.")
        try:
            data = archive.read(f"{MEDIA_DIR}{name}")
        except KeyError:
            raise BackupError(f"The archive lacks the upload {name} it lists.") from None
        if default_storage.exists(name):
            with default_storage.open(name) as existing:
                if existing.read() == data:
                    continue
            raise BackupError(f"A different file is stored as {name} already.")
        saved = default_storage.save(name, ContentFile(data))
        written.append(saved)
        if saved != name:
            raise BackupError(f"Could not store the upload {name} under its own name.")


def restore(
    *, path: Path, dry_run: bool = False, as_user: str | None = None, replace: bool = False
) -> Restored:
    """Restore the archive at `path` in one transaction, then its uploads; a failure at
    any step leaves the database and MEDIA_ROOT as they were. A dry run does everything
    but the uploads and rolls back.

    Raises:
        BackupError: the archive is no LMiX backup, is newer than this LMiX or database,
            or cannot load here (a database holding data, rows that exist already…).
    """
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise BackupError(f"No such file: {path}.") from None
    except (zipfile.BadZipFile, IsADirectoryError):
        raise BackupError(f"Not an LMiX backup: {path} is not a zip archive.") from None
    written: list[str] = []
    with archive:
        manifest = manifest_read(archive)
        scope = manifest["scope"]
        if scope == "instance" and as_user is not None:
            raise BackupError("--as-user applies to a per-user archive; this is an instance one.")
        if scope == "user" and replace:
            raise BackupError("--replace applies to an instance archive; this is a per-user one.")
        result = Restored(scope=scope)
        try:
            with transaction.atomic():
                if scope == "instance":
                    result.replaced = _instance_prepare(replace=replace)
                    result.counts = _load(archive, manifest)
                    _sequences_reset(manifest["models"])
                else:
                    target, made = _user_target(manifest, archive, as_user)
                    clashes = _clashes(manifest["models"], archive)
                    if clashes:
                        raise BackupError(_clash_message(clashes, manifest))
                    result.username = target.get_username()
                    result.counts = {user_label(): 1} if made else {}
                    result.counts |= _load(archive, manifest, target=target, as_user=not made)
                _constraints_check(manifest["models"])
                result.media = list(manifest.get("media") or [])
                if dry_run:
                    raise _DryRun
                _media_write(archive, result.media, written)
        except _DryRun:
            pass
        except BaseException:
            for name in written:
                default_storage.delete(name)
            raise
    return result


def _clash_message(clashes: list[str], manifest: dict[str, Any]) -> str:
    username = (manifest.get("user") or {}).get("username")
    shown = ", ".join(clashes[:5]) + (f" and {len(clashes) - 5} more" if len(clashes) > 5 else "")
    return (
        f"This database already holds rows of the archive: {shown}. Was it restored here "
        f"before? Delete the user “{username}” (or those objects) first, then restore again."
    )


def _sequences_reset(keys: list[str]) -> None:
    """Integer keys restored as they were: the next new row's key comes after them."""
    statements = connection.ops.sequence_reset_sql(no_style(), [_model(k) for k in keys])
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def _constraints_check(keys: list[str]) -> None:
    """Foreign keys are checked when the transaction ends; check them now, to refuse with
    the table's name rather than fail at commit."""
    tables = []
    for key in keys:
        model = _model(key)
        tables += [model._meta.db_table, *auto_m2m_tables(model)]
    try:
        connection.check_constraints(table_names=tables)
    except DatabaseError as error:
        raise BackupError(f"The archive's rows do not fit together: {error}") from error
