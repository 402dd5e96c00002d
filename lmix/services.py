"""Writes to the authoring data: LLM models (defaults, bulk add), personas (memberships,
avatars), and deletes that never change a production or frame behind its owner's back."""

import uuid
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from .errors import ApplicationError
from .llm.endpoints import infer_provider, model_display_name, normalize_endpoint
from .llm.network_policy import endpoint_refusal
from .models import (
    NAME_MAX,
    OFFLINE_ENDPOINT,
    Affiliation,
    Assistant,
    LLMModel,
    Membership,
    Persona,
    Provider,
)
from .selectors import Authored, User, usage_list

_UNSET = object()


def model_fields_prepare(
    *, api_endpoint: str, model_id: str, name: str = "", provider: str = ""
) -> dict[str, str]:
    """Normalise the endpoint, infer the provider and generate a name where left blank."""
    endpoint = normalize_endpoint(api_endpoint)
    return {
        "api_endpoint": endpoint,
        "model_id": model_id.strip(),
        "provider": provider or infer_provider(endpoint),
        "name": (name.strip() or model_display_name(model_id.strip()))[:NAME_MAX],
    }


def endpoint_check(*, api_endpoint: str) -> None:
    """Refuse an endpoint outside LMIX_LLM_ALLOWED_NETWORKS, as written (docs/security.md).

    Raises:
        ApplicationError: the reason, also under `api_endpoint`.
    """
    _reject_refused_endpoints([api_endpoint])


def _reject_refused_endpoints(endpoints: list[str]) -> None:
    """One error dict per endpoint (`{}` for the allowed ones) when any is refused."""
    reasons = [endpoint_refusal(normalize_endpoint(endpoint)) for endpoint in endpoints]
    if not any(reasons):
        return
    errors = [{"api_endpoint": [reason]} if reason else {} for reason in reasons]
    first = next(reason for reason in reasons if reason)
    raise ApplicationError(first, details=errors if len(endpoints) > 1 else errors[0])


def _origin(endpoint: str) -> tuple[str, str]:
    parts = urlsplit(endpoint)
    return parts.scheme, parts.netloc.lower()


def _make_only_default(model: LLMModel) -> None:
    LLMModel.objects.filter(owner_id=model.owner_id, is_default=True).exclude(pk=model.pk).update(
        is_default=False
    )


@transaction.atomic
def models_create(*, owner: AbstractBaseUser, items: Iterable[dict[str, Any]]) -> list[LLMModel]:
    """Add one or more models, all or nothing; at most one of them may become the default.

    Args:
        items: validated fields (api_endpoint, model_id, name?, provider?, api_key?, config?,
            is_default?).
    Raises:
        ApplicationError: an endpoint is refused by the endpoint policy, or the batch names
            a chosen name twice (or one the owner already uses) or several defaults.
    """
    items = list(items)
    _reject_refused_endpoints([item["api_endpoint"] for item in items])
    prepared = []
    for item in items:
        fields = model_fields_prepare(
            api_endpoint=item["api_endpoint"],
            model_id=item["model_id"],
            name=item.get("name", ""),
            provider=item.get("provider", ""),
        )
        prepared.append((item, fields))
    _settle_names(
        owner=owner,
        items=[(fields, bool(item.get("name", "").strip())) for item, fields in prepared],
    )
    if sum(1 for item, _ in prepared if item.get("is_default")) > 1:
        raise ApplicationError("Only one model can be the default.")

    created = []
    for item, fields in prepared:
        model = LLMModel(owner=owner, config=item.get("config") or {}, is_default=False, **fields)
        model.api_key = item.get("api_key") or ""
        model.save()
        if item.get("is_default"):
            model_set_default(model=model)
        created.append(model)
    return created


def _settle_names(
    *, owner: AbstractBaseUser, items: list[tuple[dict[str, str], bool]], exclude_pk: Any = None
) -> None:
    """Make each model's name one its owner uses once. The same endpoint and model id may be
    added many times (with other parameters): the name tells them apart.

    Args:
        items: (prepared fields, whether the user chose the name). A generated name that is
            taken gets a number ("Llama 3 (2)"); a chosen one is refused.
    Raises:
        ApplicationError: a chosen name is taken or repeated in the batch, under `name`.
    """
    taken = set(
        LLMModel.objects.filter(owner=owner).exclude(pk=exclude_pk).values_list("name", flat=True)
    )
    batch: set[str] = set()
    errors: list[dict[str, list[str]]] = []
    for fields, chosen in items:
        name = fields["name"]
        if chosen and name in taken:
            errors.append({"name": [f"You already have a model named {name!r}; choose another."]})
        elif chosen and name in batch:
            errors.append({"name": [f"The name {name!r} appears twice in this request."]})
        else:
            errors.append({})
            number = 1
            while name in taken or name in batch:
                number += 1
                name = f"{fields['name'][: NAME_MAX - 8]} ({number})"
            fields["name"] = name
        batch.add(fields["name"])
    if any(errors):
        first = next(error for error in errors if error)["name"][0]
        raise ApplicationError(first, details=errors if len(items) > 1 else errors[0])


@transaction.atomic
def model_update(*, model: LLMModel, data: dict[str, Any]) -> LLMModel:
    """Change a model. An absent or empty api_key keeps the stored key; None clears it, and
    so does a move to another host unless a new key comes with it. A new endpoint must be
    allowed by the endpoint policy (an unchanged one is judged when it is called)."""
    if "api_endpoint" in data:
        endpoint_check(api_endpoint=data["api_endpoint"])
    endpoint = data.get("api_endpoint", model.api_endpoint)
    model_id = data.get("model_id", model.model_id)
    fields = model_fields_prepare(
        api_endpoint=endpoint,
        model_id=model_id,
        name=data.get("name", model.name),
        provider=data.get("provider", "" if "api_endpoint" in data else model.provider),
    )
    chosen = bool(str(data.get("name", model.name)).strip())
    _settle_names(owner=model.owner, items=[(fields, chosen)], exclude_pk=model.pk)
    previous_endpoint = model.api_endpoint
    for attr, value in fields.items():
        setattr(model, attr, value)
    if "config" in data:
        model.config = data["config"] or {}
    api_key = data.get("api_key", _UNSET)
    moved = _origin(fields["api_endpoint"]) != _origin(previous_endpoint)
    if api_key is None or (moved and api_key in (_UNSET, "")):
        # A key is only ever sent where it was given for: moving the endpoint drops it.
        model.api_key = ""
    elif api_key is not _UNSET and api_key != "":
        model.api_key = api_key
    model.save()
    if data.get("is_default"):
        model_set_default(model=model)
    elif data.get("is_default") is False and model.is_default:
        model.is_default = False
        model.save(update_fields=["is_default"])
    return model


@transaction.atomic
def model_set_default(*, model: LLMModel) -> LLMModel:
    """Make this the owner's one default model."""
    _make_only_default(model)
    model.is_default = True
    model.save(update_fields=["is_default", "updated_at"])
    return model


@transaction.atomic
def offline_model_ensure(*, owner: AbstractBaseUser) -> LLMModel:
    """Give a user the offline narrator; it becomes the default if they have none."""
    fields = {"model_id": "narrator", "api_endpoint": OFFLINE_ENDPOINT}
    model = LLMModel.objects.filter(owner=owner, **fields).order_by("created_at").first()
    if model is None:
        fields.update(name="Offline Narrator", provider=Provider.OFFLINE)
        _settle_names(owner=owner, items=[(fields, False)])
        model = LLMModel.objects.create(owner=owner, **fields)
    if not LLMModel.objects.filter(owner=owner, is_default=True).exists():
        model_set_default(model=model)
    return model


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
