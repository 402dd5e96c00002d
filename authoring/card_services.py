"""Importing personas from character cards (V2/V3, JSON or PNG) and LuminoraCore templates,
and exporting them as cards. The formats live in cards.py, luminora.py and card_png.py."""

import base64
import binascii
import json
import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction

from . import card_png
from .card_format import json_parse, refuse
from .cards import V3, PersonaDraft, card_build, card_parse
from .luminora import looks_like_template, template_parse
from .models import Persona
from .services import AVATAR_DIR, AVATAR_MAX_BYTES, avatar_is_uploaded

CARD_MAX_BYTES = 8 * 1024 * 1024  # a PNG card: the image plus its base64 JSON


def import_size_check(*, size: int | None) -> None:
    """Refuses a file larger than CARD_MAX_BYTES (under `file`)."""
    if size is None or size > CARD_MAX_BYTES:
        refuse(
            f"The file is too large ({(size or 0) / 1024 / 1024:.1f} MiB); "
            f"the limit is {CARD_MAX_BYTES // 1024 // 1024} MiB."
        )


def draft_from_file(content: bytes) -> PersonaDraft:
    """Reads an uploaded file: a PNG with a card chunk, or JSON (a card or a template)."""
    import_size_check(size=len(content))
    if card_png.is_png(content):
        return _draft_from_png(content)
    return draft_from_data(json_parse(content))


def draft_from_data(data: Any) -> PersonaDraft:
    """Parsed JSON as a draft: a card when it has a `spec`, else a LuminoraCore template."""
    if isinstance(data, dict) and "spec" in data:
        return card_parse(data)
    if looks_like_template(data):
        return template_parse(data)
    refuse(
        "Not a character card or a LuminoraCore template: a card has `spec` "
        "('chara_card_v2' or 'chara_card_v3') and `data`; a template has `persona`, "
        "`core_traits`, `linguistic_profile` and `behavioral_rules`."
    )


def _draft_from_png(content: bytes) -> PersonaDraft:
    try:
        chunks = card_png.text_chunks(content)
        image = card_png.without_cards(content)
    except card_png.PngError as error:
        refuse(str(error))
    # V3 says: with both chunks present, the ccv3 one is the card.
    keyword = next((k for k in ("ccv3", "chara") if k in chunks), None)
    if keyword is None:
        refuse("The PNG holds no character card (no 'chara' or 'ccv3' text chunk).")
    try:
        # Some writers wrap the base64 in lines; whitespace is no part of it.
        raw = base64.b64decode("".join(chunks[keyword].split()), validate=True)
    except (binascii.Error, ValueError):
        refuse(f"The PNG's '{keyword}' chunk is not base64.")
    draft = card_parse(json_parse(raw, what=f"The PNG's '{keyword}' chunk"))
    if len(image) > AVATAR_MAX_BYTES:
        refuse(
            f"The card's image is too large for an avatar ({len(image) / 1024 / 1024:.1f} MiB "
            "without its card); the limit is 2 MiB."
        )
    draft.avatar_png = image
    return draft


@transaction.atomic
def persona_import(*, owner: AbstractBaseUser, draft: PersonaDraft) -> Persona:
    """Create a persona from a checked draft, with its image (if any) as its avatar: all or
    nothing (a failed save removes the stored image).

    Returns:
        The new persona.
    """
    persona = Persona(owner=owner, imported=draft.imported, **draft.fields)
    name = None
    if draft.avatar_png is not None:
        name = default_storage.save(
            f"{AVATAR_DIR}{uuid.uuid4().hex}.png", ContentFile(draft.avatar_png)
        )
        persona.avatar_url = f"{settings.MEDIA_URL}{name}"
    try:
        # A backstop for the lengths the parsers check; the avatar is our own address.
        persona.full_clean(exclude=["owner", "avatar_url"])
        persona.save()
    except Exception:
        if name:
            default_storage.delete(name)
        raise
    return persona


def persona_card(*, persona: Persona, spec: str, fmt: str) -> tuple[bytes, str, str]:
    """The persona as a card file.

    Args:
        spec: "v2" or "v3".
        fmt: "json", or "png" (the avatar when it is a stored PNG, else a plain image).
    Returns:
        (content, content type, file name).
    """
    card = card_build(persona, spec="chara_card_v2" if spec == "v2" else V3)
    text = json.dumps(card, ensure_ascii=False)
    # ASCII only: a header's file name must survive every client's decoding.
    stem = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in persona.name)
    stem = stem.strip("_")[:60] or "persona"
    if fmt == "json":
        return text.encode(), "application/json", f"{stem}.{spec}.json"
    encoded = base64.b64encode(text.encode()).decode("ascii")
    keyword = "ccv3" if spec == "v3" else "chara"
    return (
        card_png.with_text(_avatar_png(persona), {keyword: encoded}),
        "image/png",
        f"{stem}.{spec}.png",
    )


def _avatar_png(persona: Persona) -> bytes:
    """The persona's stored avatar when it is a well-formed PNG, else a placeholder."""
    if avatar_is_uploaded(persona.avatar_url):
        name = persona.avatar_url.removeprefix(settings.MEDIA_URL)
        try:
            with default_storage.open(name) as file:
                content = file.read(AVATAR_MAX_BYTES + 1)
            card_png.text_chunks(content)
            return content
        except (OSError, card_png.PngError):
            pass
    return card_png.placeholder()
