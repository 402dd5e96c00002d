"""Character cards V2 (`chara_card_v2`) and V3 (`chara_card_v3`) as personas, both ways.

What maps to a persona column:

| card (`data.`)        | persona            |
| --------------------- | ------------------ |
| name                  | name               |
| nickname (V3)         | known_as           |
| description           | universal_truth    |
| personality           | style              |
| first_mes             | greeting           |
| mes_example           | example_dialogue   |
| tags                  | tags (20 that fit; the rest kept) |
| character_book        | internal_truth (its enabled entries, as text) |

Everything else (scenario, creator notes, system prompt, post-history instructions,
alternate and group greetings, creator, version, extensions, the book itself, V3's assets,
sources, dates, and fields this code does not know) is kept in `Persona.imported["card"]`,
so exporting gives it back. LMiX's own layers travel in `extensions.lmix` (internal and
external truth, `known_as` in a V2 card, a LuminoraCore template's parts, and V3-only
fields in a V2 card), so importing a card LMiX exported is lossless.
"""

from dataclasses import dataclass, field
from typing import Any

from lmix.models import NAME_MAX, TEXT_MAX

from .card_format import flag, no_nul, number, obj, refuse, text, texts
from .models import Persona

V2, V3 = "chara_card_v2", "chara_card_v3"
SPECS = {"v2": V2, "v3": V3}
TAG_MAX, TAGS_MAX = 40, 20  # as the persona form allows (serializers.py)
LMIX = "lmix"  # our namespace in `extensions`, as the V2 spec asks

# Text fields both specs have that no persona column holds.
_CARD_TEXTS = (
    "scenario",
    "creator_notes",
    "system_prompt",
    "post_history_instructions",
    "creator",
    "character_version",
)
_MAPPED = {"name", "nickname", "description", "personality", "first_mes", "mes_example", "tags"}
_V3_ONLY = (
    "group_only_greetings",
    "assets",
    "creator_notes_multilingual",
    "source",
    "creation_date",
)


@dataclass
class PersonaDraft:
    """What an import creates: persona column values, the `imported` JSON, and the image
    (PNG bytes) to keep as its avatar, if any."""

    fields: dict[str, Any]
    imported: dict[str, Any] = field(default_factory=dict)
    avatar_png: bytes | None = None


def card_parse(card: Any) -> PersonaDraft:
    """A V2 or V3 card (parsed JSON) as a persona draft, checked field by field.

    Raises:
        ApplicationError: not a card object, another spec, no `data.name`, a field of the
            wrong type or too long — each naming the field.
    """
    if not isinstance(card, dict):
        refuse("A character card must be a JSON object.")
    spec = card.get("spec")
    if spec not in (V2, V3):
        refuse(
            f"Not a character card V2 or V3: `spec` is {spec!r}, expected "
            f"'{V2}' or '{V3}' (V1 cards are not supported)."
        )
    no_nul(card)
    data = obj(card.get("data"), "data", required=True)
    name = text(data.get("name"), "data.name", limit=NAME_MAX, required=True)
    columns = {
        "name": name.strip(),
        "universal_truth": text(data.get("description"), "data.description", limit=TEXT_MAX),
        "style": text(data.get("personality"), "data.personality", limit=TEXT_MAX),
        "greeting": text(data.get("first_mes"), "data.first_mes", limit=TEXT_MAX),
        "example_dialogue": text(data.get("mes_example"), "data.mes_example", limit=TEXT_MAX),
        "known_as": text(data.get("nickname"), "data.nickname", limit=NAME_MAX).strip(),
    }
    kept: dict[str, Any] = {}
    for key in _CARD_TEXTS:
        kept[key] = text(data.get(key), f"data.{key}", limit=TEXT_MAX)
    kept["alternate_greetings"] = texts(data.get("alternate_greetings"), "data.alternate_greetings")
    extensions = dict(obj(data.get("extensions"), "data.extensions") or {})
    lmix = obj(extensions.pop(LMIX, None), f"data.extensions.{LMIX}") or {}
    kept["extensions"] = extensions
    # V3 fields: from the card itself, or carried in a V2 card LMiX exported.
    v3 = dict(obj(lmix.get("card_v3"), f"data.extensions.{LMIX}.card_v3") or {})
    if spec == V3:
        v3.update({key: data[key] for key in _V3_ONLY if key in data})
    kept.update(_v3_fields(v3))
    book = data.get("character_book")
    if book is not None:
        kept["character_book"] = _book(book)
    tags, kept["extra_tags"] = _tags(texts(data.get("tags"), "data.tags"))
    columns["tags"] = tags
    # What this code does not know is kept as it was, for export (V3 §CharacterCard).
    known = _MAPPED | set(_CARD_TEXTS) | {"alternate_greetings", "extensions", "character_book"}
    if spec == V3:
        known |= set(_V3_ONLY) | {"modification_date"}  # the export sets it afresh
    kept["other"] = {key: value for key, value in data.items() if key not in known}
    columns.update(_lmix_layers(lmix, kept.get("character_book")))
    kept = {key: value for key, value in kept.items() if value not in ("", [], {}, None)}
    imported: dict[str, Any] = {"card": kept} if kept else {}
    luminoracore = obj(lmix.get("luminoracore"), f"data.extensions.{LMIX}.luminoracore")
    if luminoracore:
        imported["luminoracore"] = luminoracore
    return PersonaDraft(fields=columns, imported=imported)


def _v3_fields(v3: dict) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "group_only_greetings": texts(v3.get("group_only_greetings"), "data.group_only_greetings"),
        "source": texts(v3.get("source"), "data.source"),
        "creation_date": number(v3.get("creation_date"), "data.creation_date"),
    }
    notes = obj(v3.get("creator_notes_multilingual"), "data.creator_notes_multilingual") or {}
    for language, note in notes.items():
        text(note, f"data.creator_notes_multilingual.{language}", limit=TEXT_MAX)
    fields["creator_notes_multilingual"] = notes
    assets = v3.get("assets")
    if assets is not None:
        if not isinstance(assets, list):
            refuse("data.assets must be a list of objects.")
        for i, asset in enumerate(assets):
            obj(asset, f"data.assets[{i}]", required=True)
            for key in ("type", "uri", "name", "ext"):
                text(asset.get(key), f"data.assets[{i}].{key}", required=key != "name")
    fields["assets"] = assets
    return fields


def _book(book: Any) -> dict:
    """A character book, checked; kept whole (unknown keys included) for export."""
    obj(book, "data.character_book", required=True)
    for key in ("name", "description"):
        text(book.get(key), f"data.character_book.{key}")
    for key in ("scan_depth", "token_budget"):
        number(book.get(key), f"data.character_book.{key}")
    flag(book.get("recursive_scanning"), "data.character_book.recursive_scanning")
    obj(book.get("extensions"), "data.character_book.extensions")
    entries = book.get("entries")
    if not isinstance(entries, list):
        refuse("data.character_book.entries must be a list of entries.")
    for i, entry in enumerate(entries):
        where = f"data.character_book.entries[{i}]"
        obj(entry, where, required=True)
        texts(entry.get("keys"), f"{where}.keys")
        texts(entry.get("secondary_keys"), f"{where}.secondary_keys")
        text(entry.get("content"), f"{where}.content", limit=TEXT_MAX, required=False)
        for key in ("name", "comment", "position"):
            text(entry.get(key), f"{where}.{key}")
        for key in ("enabled", "constant", "selective", "case_sensitive", "use_regex"):
            flag(entry.get(key), f"{where}.{key}")
        for key in ("insertion_order", "priority"):
            number(entry.get(key), f"{where}.{key}")
        if entry.get("id") is not None and not isinstance(entry["id"], int | str):
            refuse(f"{where}.id must be a number or a string.")
        obj(entry.get("extensions"), f"{where}.extensions")
    return book


def book_truth(book: dict | None) -> str:
    """The enabled entries of a character book as one text, in insertion order: constant and
    regex-keyed entries as they are, keyed ones after their keys ("Castle, moat: …"), V3
    decorators (`@@depth 4` lines leading the content) left out.

    Raises:
        ApplicationError: the text would not fit a truth.
    """
    if not book:
        return ""
    entries = [e for e in book.get("entries", []) if e.get("enabled", True) is not False]
    entries.sort(key=lambda e: e.get("insertion_order") or 0)
    parts = []
    for entry in entries:
        content = _without_decorators(entry.get("content") or "")
        keys = [k.strip() for k in entry.get("keys") or [] if k.strip()]
        if not content:
            continue
        if entry.get("constant") or entry.get("use_regex") or not keys:
            parts.append(content)
        else:
            parts.append(f"{', '.join(keys)}: {content}")
    truth = "\n\n".join(parts)
    if len(truth) > TEXT_MAX:
        refuse(
            f"data.character_book is too long to keep as the persona's internal truth "
            f"({len(truth)} characters of enabled entries; the limit is {TEXT_MAX})."
        )
    return truth


def _without_decorators(content: str) -> str:
    """Content without the `@@name value` lines V3 puts before it (trimmed, as it says)."""
    lines = content.strip().splitlines()
    while lines and lines[0].lstrip().startswith("@@"):
        lines.pop(0)
    return "\n".join(lines).strip()


def _lmix_layers(lmix: dict, book: dict | None) -> dict[str, str]:
    """Internal and external truth and `known_as` from `extensions.lmix` (a card LMiX
    exported); a foreign card's internal truth is its book."""
    where = f"data.extensions.{LMIX}"
    layers = {
        "external_truth": text(
            lmix.get("external_truth"), f"{where}.external_truth", limit=TEXT_MAX
        )
    }
    if "internal_truth" in lmix:
        layers["internal_truth"] = text(
            lmix["internal_truth"], f"{where}.internal_truth", limit=TEXT_MAX
        )
    else:
        layers["internal_truth"] = book_truth(book)
    known_as = text(lmix.get("known_as"), f"{where}.known_as", limit=NAME_MAX).strip()
    if known_as:
        layers["known_as"] = known_as
    return layers


def _tags(tags: list[str]) -> tuple[list[str], list[str]]:
    """The tags a persona can hold (tidied as its form does) and the rest, kept aside."""
    kept: dict[str, str] = {}
    extra: list[str] = []
    for tag in tags:
        tidy = " ".join(tag.split())
        if not tidy or tidy.casefold() in kept:
            continue
        if len(tidy) <= TAG_MAX and len(kept) < TAGS_MAX:
            kept[tidy.casefold()] = tidy
        else:
            extra.append(tag)
    return list(kept.values()), extra


def card_build(persona: Persona, *, spec: str) -> dict[str, Any]:
    """The persona as a card of `spec` (V2 or V3): its columns, then what its import kept.

    A V2 card carries V3-only fields (and `known_as`) in `extensions.lmix`, so a V3 card
    exported as V2 and imported again loses nothing.
    """
    imported = persona.imported if isinstance(persona.imported, dict) else {}
    # Written by an import, but editable in the admin: anything but an object counts as none.
    card = imported.get("card") if isinstance(imported.get("card"), dict) else {}
    lmix: dict[str, Any] = {
        "internal_truth": persona.internal_truth,
        "external_truth": persona.external_truth,
    }
    if imported.get("luminoracore"):
        lmix["luminoracore"] = imported["luminoracore"]
    data: dict[str, Any] = {
        **(card["other"] if isinstance(card.get("other"), dict) else {}),
        "name": persona.name,
        "description": persona.universal_truth,
        "personality": persona.style,
        "scenario": card.get("scenario", ""),
        "first_mes": persona.greeting,
        "mes_example": persona.example_dialogue,
        "creator_notes": card.get("creator_notes", ""),
        "system_prompt": card.get("system_prompt", ""),
        "post_history_instructions": card.get("post_history_instructions", ""),
        "alternate_greetings": card.get("alternate_greetings", []),
        "tags": [*persona.tags, *card.get("extra_tags", [])],
        "creator": card.get("creator", ""),
        "character_version": card.get("character_version", ""),
    }
    if "character_book" in card:
        data["character_book"] = card["character_book"]
    v3 = {key: card[key] for key in _V3_ONLY if key in card}
    if spec == V3:
        data.update(v3)
        data.setdefault("group_only_greetings", [])
        if persona.known_as:
            data["nickname"] = persona.known_as
        data["modification_date"] = int(persona.updated_at.timestamp())
    else:
        if v3:
            lmix["card_v3"] = v3
        if persona.known_as:
            lmix["known_as"] = persona.known_as
    extensions = card.get("extensions") if isinstance(card.get("extensions"), dict) else {}
    data["extensions"] = {**extensions, LMIX: lmix}
    return {"spec": spec, "spec_version": "3.0" if spec == V3 else "2.0", "data": data}
