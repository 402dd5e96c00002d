"""Writes to LLM models: add (one or in bulk, endpoints checked), edit, test the connection,
the default model, every user's offline narrator."""

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from .crypto import UnreadableSecret
from .errors import ApplicationError
from .llm.base import LLMEndpointRefused
from .llm.client import llm_test
from .llm.discovery import context_size_unknown, context_sizes_discover
from .llm.endpoints import api_base, infer_provider, model_display_name, normalize_endpoint
from .llm.network_policy import endpoint_refusal
from .models import NAME_MAX, OFFLINE_ENDPOINT, LLMModel, Provider

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


def models_create(
    *, owner: AbstractBaseUser, items: Iterable[dict[str, Any]], refuse_duplicates: bool = False
) -> list[LLMModel]:
    """Add one or more models, all or nothing; at most one of them may become the default.
    A model whose config sets no context size gets the one its server reports
    (lmix/llm/discovery.py), marked `context_size_discovered`.

    Args:
        items: validated fields (api_endpoint, model_id, name?, provider?, api_key?, config?,
            is_default?).
        refuse_duplicates: refuse an item whose endpoint, model id and key the owner already
            has (or that the batch repeats): a bulk add's rule. One at a time, the same model
            may be added again with other settings, under another name.
    Raises:
        ApplicationError: an endpoint is refused by the endpoint policy, an item is a
            duplicate, or the batch names a chosen name twice (or one the owner already uses)
            or several defaults.
    """
    items = list(items)
    # Checked before the servers are asked (a refused batch asks nobody) and again with the
    # rows written, in one transaction: the network is not waited for inside it.
    prepared = _models_prepare(owner=owner, items=items, refuse_duplicates=refuse_duplicates)
    sizes = context_sizes_discover(
        (fields["provider"], fields["api_endpoint"], item.get("api_key") or "", fields["model_id"])
        for item, fields in prepared
        if not (item.get("config") or {}).get("context_size")
    )
    with transaction.atomic():
        prepared = _models_prepare(owner=owner, items=items, refuse_duplicates=refuse_duplicates)
        found = iter(sizes)
        created = []
        for item, fields in prepared:
            config = dict(item.get("config") or {})
            if not config.get("context_size"):
                config.pop("context_size_discovered", None)
                size = next(found)
                if size:
                    config.update(context_size=size, context_size_discovered=True)
            model = LLMModel(owner=owner, config=config, is_default=False, **fields)
            model.api_key = item.get("api_key") or ""
            model.save()
            if item.get("is_default"):
                model_set_default(model=model)
            created.append(model)
    return created


def _models_prepare(
    *, owner: AbstractBaseUser, items: list[dict[str, Any]], refuse_duplicates: bool
) -> list[tuple[dict[str, Any], dict[str, str]]]:
    """Each item with its prepared fields (normalised endpoint, provider, a name it may have).

    Raises:
        ApplicationError: as `models_create` says.
    """
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
    if refuse_duplicates:
        _reject_duplicates(owner=owner, prepared=prepared)
    _settle_names(
        owner=owner,
        items=[(fields, bool(item.get("name", "").strip())) for item, fields in prepared],
    )
    if sum(1 for item, _ in prepared if item.get("is_default")) > 1:
        raise ApplicationError("Only one model can be the default.")
    return prepared


def _same_model(provider: str, endpoint: str, model_id: str) -> tuple[str, str]:
    """What makes two models the same: the URL called (an Ollama root and its /v1 are one
    server; the host in any case) and the model id."""
    base = api_base(provider, endpoint)
    parts = urlsplit(base)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path}", model_id


def _stored_key(model: LLMModel) -> str | None:
    try:
        return model.api_key
    except UnreadableSecret:
        return None  # equal to no key anyone sends


def _reject_duplicates(
    *, owner: AbstractBaseUser, prepared: list[tuple[dict[str, Any], dict[str, str]]]
) -> None:
    """Refuse items whose endpoint, model id and key the owner already has, or that the
    batch repeats, naming the model they duplicate (one error dict per item).

    Raises:
        ApplicationError: under `model_id`, "Already added as “<name>”."
    """
    model_ids = {fields["model_id"] for _, fields in prepared}
    existing: dict[tuple[str, str], list[LLMModel]] = {}
    # Only the owner's own rows: their keys are the only ones compared (decrypted here).
    for row in LLMModel.objects.filter(owner=owner, model_id__in=model_ids).order_by("created_at"):
        existing.setdefault(_same_model(row.provider, row.api_endpoint, row.model_id), []).append(
            row
        )
    seen: set[tuple[str, str, str]] = set()
    errors: list[dict[str, list[str]]] = []
    for item, fields in prepared:
        same = _same_model(fields["provider"], fields["api_endpoint"], fields["model_id"])
        api_key = item.get("api_key") or ""
        twin = next((row for row in existing.get(same, []) if _stored_key(row) == api_key), None)
        if twin is not None:
            errors.append({"model_id": [f"Already added as “{twin.name}”."]})
        elif (*same, api_key) in seen:
            errors.append({"model_id": ["This model appears twice in this request."]})
        else:
            errors.append({})
        seen.add((*same, api_key))
    if any(errors):
        first = next(error for error in errors if error)["model_id"][0]
        raise ApplicationError(first, details=errors if len(prepared) > 1 else errors[0])


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


def model_update(*, model: LLMModel, data: dict[str, Any]) -> LLMModel:
    """Change a model. An absent or empty api_key keeps the stored key; None clears it, and
    so does a move to another host unless a new key comes with it. A new endpoint must be
    allowed by the endpoint policy (an unchanged one is judged when it is called).

    A model moved to another provider, endpoint or model id is probed again: what its old
    server took (`config.structured_mode`) is forgotten unless the same edit chooses another
    mode, and a context size its server reported (not one typed) is discovered again.
    """
    if "api_endpoint" in data:
        endpoint_check(api_endpoint=data["api_endpoint"])
    fields = model_fields_prepare(
        api_endpoint=data.get("api_endpoint", model.api_endpoint),
        model_id=data.get("model_id", model.model_id),
        name=data.get("name", model.name),
        provider=data.get("provider", "" if "api_endpoint" in data else model.provider),
    )
    moved = _origin(fields["api_endpoint"]) != _origin(model.api_endpoint)
    api_key = data.get("api_key", _UNSET)
    if api_key is None or (moved and api_key in (_UNSET, "")):
        # A key is only ever sent where it was given for: moving the endpoint drops it.
        api_key = ""
    elif api_key in (_UNSET, ""):
        api_key = _UNSET  # kept
    config = _config_edited(model=model, data=data, fields=fields)
    if not config.get("context_size") and _moved_model(model=model, fields=fields):
        key = (_stored_key(model) or "") if api_key is _UNSET else api_key
        (size,) = context_sizes_discover(
            [(fields["provider"], fields["api_endpoint"], key, fields["model_id"])]
        )
        if size:
            config.update(context_size=size, context_size_discovered=True)
    return _model_save(model=model, data=data, fields=fields, config=config, api_key=api_key)


def _moved_model(*, model: LLMModel, fields: dict[str, str]) -> bool:
    """Whether an edit changes what a model's probes depend on: provider, endpoint, model id."""
    before = (model.provider, normalize_endpoint(model.api_endpoint), model.model_id.strip())
    return (fields["provider"], fields["api_endpoint"], fields["model_id"]) != before


def _config_edited(
    *, model: LLMModel, data: dict[str, Any], fields: dict[str, str]
) -> dict[str, Any]:
    """The model's config after an edit (see `model_update`): a context size that changed was
    typed by its owner; a move forgets what the old server was found to take."""
    before = model.config if isinstance(model.config, dict) else {}
    config = dict((data["config"] or {}) if "config" in data else before)
    if config.get("context_size") != before.get("context_size"):
        config.pop("context_size_discovered", None)
    if _moved_model(model=model, fields=fields):
        # A form sends the config back as it got it: the same mode is the old server's.
        if config.get("structured_mode") == before.get("structured_mode"):
            config.pop("structured_mode", None)
        if config.get("context_size_discovered"):
            config.pop("context_size", None)
            config.pop("context_size_discovered", None)
    if not config.get("context_size"):
        config.pop("context_size_discovered", None)
    return config


@transaction.atomic
def _model_save(
    *,
    model: LLMModel,
    data: dict[str, Any],
    fields: dict[str, str],
    config: dict[str, Any],
    api_key: Any,
) -> LLMModel:
    chosen = bool(str(data.get("name", model.name)).strip())
    _settle_names(owner=model.owner, items=[(fields, chosen)], exclude_pk=model.pk)
    for attr, value in fields.items():
        setattr(model, attr, value)
    model.config = config
    if api_key is not _UNSET:
        model.api_key = api_key
    model.save()
    if data.get("is_default"):
        model_set_default(model=model)
    elif data.get("is_default") is False and model.is_default:
        model.is_default = False
        model.save(update_fields=["is_default"])
    return model


def model_test(
    *,
    owner: AbstractBaseUser,
    model: LLMModel | None = None,
    api_endpoint: str = "",
    api_key: str = "",
    model_id: str = "",
    provider: str = "",
) -> dict[str, Any]:
    """Test a connection (a saved model, or what a form holds) and discover the model's
    context size. A saved model without a typed size keeps the discovered one.

    Returns:
        llm_test's answer, with `context_size` (None when unknown) and, when a local server
        reached did not report it, `context_size_hint` (what to do, for the form).
    Raises:
        ApplicationError: the endpoint is outside LMIX_LLM_ALLOWED_NETWORKS (under
            `api_endpoint`); a refused address is never connected to.
        UnreadableSecret: the saved model's key no longer decrypts (a 400 asking for it).
    """
    if model is not None:
        target = {
            "provider": model.provider,
            "endpoint": model.api_endpoint,
            # An unreadable key is a 400 asking for it again: no provider is called.
            "api_key": model.api_key,
            "model_id": model.model_id,
        }
    else:
        endpoint_check(api_endpoint=api_endpoint)
        fields = model_fields_prepare(
            api_endpoint=api_endpoint, model_id=model_id or "x", provider=provider
        )
        target = {
            "provider": fields["provider"],
            "endpoint": fields["api_endpoint"],
            "api_key": api_key,
            "model_id": model_id.strip(),
        }
    try:
        result = llm_test(**target, owner=owner)
    except LLMEndpointRefused as refused:
        reason = str(refused)
        raise ApplicationError(reason, details={"api_endpoint": [reason]}) from None
    size = None
    if result.get("ok"):
        (size,) = context_sizes_discover(
            [(target["provider"], target["endpoint"], target["api_key"], target["model_id"])]
        )
        if size is None and context_size_unknown(target["provider"]):
            result["context_size_hint"] = (
                "The server did not report its context size; enter it (Context size)."
            )
    result["context_size"] = size
    if model is not None and size:
        _context_size_store(model=model, size=size)
    return result


@transaction.atomic
def _context_size_store(*, model: LLMModel, size: int) -> None:
    """Store a discovered context size on a model whose owner typed none (read afresh and
    locked: a concurrent call may be writing its structured mode)."""
    fresh = LLMModel.objects.select_for_update().filter(pk=model.pk).first()
    if fresh is None:
        return
    config = dict(fresh.config) if isinstance(fresh.config, dict) else {}
    if config.get("context_size") and not config.get("context_size_discovered"):
        return  # typed by its owner
    config.update(context_size=size, context_size_discovered=True)
    fresh.config = config
    fresh.save(update_fields=["config", "updated_at"])
    model.config = config


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
