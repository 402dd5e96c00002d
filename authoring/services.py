"""Writes to the authoring data: personas (memberships, avatars), and deletes that never
change a production or frame behind its owner's back."""

import uuid
from dataclasses import asdict

from django.conf import settings
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from lmix.errors import ApplicationError
from lmix.models import LLMModel

from .models import Affiliation, Assistant, Membership, Persona
from .usage import Authored, User, usage_list


@transaction.atomic
def persona_save(
    *,
    persona: Persona,
    affiliations: list[Affiliation] | None = None,
    covert_affiliations: list[Affiliation] | None = None,
) -> Persona:
    """Save a persona and, when given, replace its affiliations (keeping join dates) and
    which of them it belongs to covertly.

    Args:
        affiliations: its groups; None keeps them.
        covert_affiliations: the groups, among its affiliations (as given, or as they are),
            that only fellow members know it belongs to; None keeps the flags of the
            memberships that stay (a new membership is public).
    Returns:
        The persona, its relations reloaded on next access.
    Raises:
        ApplicationError: a covert affiliation is not among its affiliations.
    """
    if covert_affiliations is not None:
        if affiliations is not None:
            groups = {group.pk for group in affiliations}
        else:
            groups = set(
                Membership.objects.filter(persona_id=persona.pk).values_list(
                    "affiliation_id", flat=True
                )
            )
        stray = [group.name for group in covert_affiliations if group.pk not in groups]
        if stray:
            message = "Covert affiliations must be among the persona's affiliations."
            raise ApplicationError(
                message,
                details={"covert_affiliations": [f"{message} Not among them: {', '.join(stray)}."]},
            )
    previous = Persona.objects.filter(pk=persona.pk).values_list("avatar_url", flat=True).first()
    persona.save()
    if previous and previous != persona.avatar_url:
        avatar_discard_on_commit(previous)
    if affiliations is not None:
        persona.affiliations.set(affiliations)
    if covert_affiliations is not None:
        covert = [group.pk for group in covert_affiliations]
        memberships = Membership.objects.filter(persona=persona)
        memberships.filter(affiliation__in=covert).update(covert=True)
        memberships.exclude(affiliation__in=covert).update(covert=False)
    if affiliations is not None or covert_affiliations is not None:
        # Prefetched memberships (an API update's instance) are stale now.
        persona.refresh_from_db()
    return persona


AVATAR_MAX_BYTES = 2 * 1024 * 1024
AVATAR_DIR = "avatars/"
# What an image file starts with, whatever name or content type the browser gave it.
_IMAGE_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "png"),
    (b"\xff\xd8\xff", 0, "jpg"),
    (b"GIF87a", 0, "gif"),
    (b"GIF89a", 0, "gif"),
    (b"WEBP", 8, "webp"),  # after "RIFF" and the file size
)


def _image_kind(head: bytes) -> str | None:
    for signature, offset, kind in _IMAGE_SIGNATURES:
        if head[offset : offset + len(signature)] == signature:
            if kind == "webp" and not head.startswith(b"RIFF"):
                continue
            return kind
    return None


def avatar_is_uploaded(url: str) -> bool:
    """Whether `url` is an avatar this server stores (not an outside address)."""
    return url.startswith(f"{settings.MEDIA_URL}{AVATAR_DIR}")


def avatar_discard_on_commit(url: str) -> None:
    """Remove an uploaded avatar once nothing points to it any more (after commit, so a
    rolled-back change keeps its file)."""
    if avatar_is_uploaded(url):
        name = url.removeprefix(settings.MEDIA_URL)
        transaction.on_commit(lambda: default_storage.delete(name))


def avatar_size_check(*, size: int | None) -> None:
    """Raises ApplicationError (under `avatar`) for an image larger than 2 MiB."""
    if size is None or size > AVATAR_MAX_BYTES:
        mib = (size or 0) / 1024 / 1024
        message = f"The image is too large ({mib:.1f} MiB); the limit is 2 MiB."
        raise ApplicationError(message, details={"avatar": [message]})


@transaction.atomic
def persona_avatar_set(*, persona: Persona, upload: UploadedFile) -> Persona:
    """Store an uploaded image as the persona's avatar; its `avatar_url` then points to it
    (and the previous upload, if any, is removed).

    Raises:
        ApplicationError: the file is larger than 2 MiB or not a PNG, JPEG, WebP or GIF
            image (judged by its content, not its name), under `avatar`.
    """
    avatar_size_check(size=upload.size)
    upload.seek(0)
    kind = _image_kind(upload.read(16))
    upload.seek(0)
    if kind is None:
        message = "The avatar must be a PNG, JPEG, WebP or GIF image."
        raise ApplicationError(message, details={"avatar": [message]})
    # A fresh, unguessable name per upload: caches never show an old image, and nobody
    # finds an avatar without being shown its address.
    name = default_storage.save(f"{AVATAR_DIR}{uuid.uuid4().hex}.{kind}", upload)
    previous = persona.avatar_url
    persona.avatar_url = f"{settings.MEDIA_URL}{name}"
    try:
        persona.save(update_fields=["avatar_url", "updated_at"])
    except Exception:
        default_storage.delete(name)
        raise
    avatar_discard_on_commit(previous)
    return persona


def usage_message(users: list[User]) -> str:
    """What uses an object, in words: 'Used by the production “X” and the frames “Y” and “Z”.'
    (at most five names of a kind, then how many more)."""
    parts = []
    for kind in ("production", "frame"):
        names = [f"“{user.name}”" for user in users if user.kind == kind]
        if not names:
            continue
        shown = names[:5] + ([f"{len(names) - 5} more"] if len(names) > 5 else [])
        listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
        parts.append(f"the {kind}{'s' if len(names) > 1 else ''} {listed}")
    # "the productions “A” and “B”, and the frame “C”": a comma where a list has its own "and".
    joiner = ", and " if len(users) > len(parts) else " and "
    return f"Used by {joiner.join(parts)}."


@transaction.atomic
def authored_delete(*, obj: Authored) -> None:
    """Delete a world, scenario, affiliation, persona, assistant or model, unless a
    production or frame uses it: deleting it would silently shrink a production's cast
    below its minimum, or change a frame's seats or models, so the owner is told instead.

    What goes with it is only authoring data nobody plays: a persona's or model's unused
    assistants, an affiliation's memberships (its members just leave it), a persona's
    uploaded avatar.

    Raises:
        ApplicationError: 409, naming what uses it ("Used by the production “X” and the
            frame “Y”.") under `used_by` as {kind, id, name}.
    """
    # Locked first: a cast or seat added meanwhile waits for this delete (its foreign key
    # check then fails) instead of slipping in between the check and the delete.
    type(obj).objects.select_for_update().filter(pk=obj.pk).first()
    if isinstance(obj, Persona | LLMModel):
        field = "persona" if isinstance(obj, Persona) else "model"
        list(Assistant.objects.select_for_update().filter(**{field: obj}))
    users = usage_list(obj=obj)
    if users:
        raise ApplicationError(
            f"{usage_message(users)} It cannot be deleted while they use it.",
            details={"used_by": [asdict(user) for user in users]},
            status_code=409,
        )
    if isinstance(obj, Persona):
        avatar_discard_on_commit(obj.avatar_url)
    obj.delete()
