"""What an author pass and a designer pass answer (pydantic, strict), and the offline
narrator's deterministic answers to them, made from the writer's text alone."""

import re
from dataclasses import dataclass
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lmix.models import NAME_MAX
from lmix.text import has_visible_text

from ..models import (
    CATEGORY_MAX,
    CONTENT_FIELD_MAX,
    CONTENT_FIELDS_MAX,
    SKILL_TEXT_MAX,
)

FIELD_NAME_MAX = 40
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class AuthorTold:
    """What an author pass's prompt was compiled from, for the offline narrator."""

    text: str
    existing: tuple[tuple[str, str], ...] = ()  # (type, name) of the frame's entries


@dataclass(frozen=True)
class DesignerTold:
    text: str


class AuthorEntry(BaseModel):
    """One content entry structured from an author's text."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["location", "npc", "item", "event", "lore"]
    name: str = Field(min_length=1, max_length=NAME_MAX)
    description: str = Field(min_length=1, max_length=CONTENT_FIELD_MAX)
    # Short fields that fit the type (exits, wants, appearance…), name → text.
    details: dict[str, str] = Field(default_factory=dict, max_length=CONTENT_FIELDS_MAX - 1)
    pscale: int = Field(ge=-3, le=2)
    # The name of an existing entry this one refines, or null for a new one.
    extends: str | None = Field(default=None, max_length=NAME_MAX)

    @field_validator("name", "description")
    @classmethod
    def _visible(cls, value: str) -> str:
        if not has_visible_text(value):
            raise ValueError("must show some text")
        return value.strip()

    @field_validator("details")
    @classmethod
    def _short_fields(cls, value: dict[str, str]) -> dict[str, str]:
        for key, text in value.items():
            if not key.strip() or len(key) > FIELD_NAME_MAX:
                raise ValueError(f"field names are 1 to {FIELD_NAME_MAX} characters")
            if len(text) > CONTENT_FIELD_MAX:
                raise ValueError(f"a field holds at most {CONTENT_FIELD_MAX} characters")
        return {k.strip(): v.strip() for k, v in value.items() if k.strip() != "description"}

    def data(self) -> dict[str, str]:
        """The entry's stored data: its description and the other fields."""
        return {"description": self.description, **self.details}

    @classmethod
    def offline_answer(cls, context: AuthorTold, variant: int = 0) -> Self:
        """The offline narrator's entry: its type from the words (the name's own first: "a
        lighthouse called Greyhaven Light, its lamp dark" is a place, not a lamp), its name
        from "called X" or "named X" (else the text's first words), its description the
        text itself."""
        text = " ".join(context.text.split())
        named = _NAMED.search(text)
        name = named.group(1) if named else " ".join(text.split()[:4]).rstrip(".,;:!?")
        kind = next(
            (k for words in (name, text) for k, cue in _TYPE_CUES if cue.search(words)), "lore"
        )
        name = name[:NAME_MAX] or "Untitled"
        same = next(
            (n for t, n in context.existing if n.casefold() == name.casefold() and t != kind), None
        )
        return cls(
            type=kind,
            name=name,
            description=text[:CONTENT_FIELD_MAX] or name,
            pscale=0,
            extends=same,
        )


_TYPE_CUES = [
    ("npc", re.compile(r"\b(man|woman|person|merchant|guard|priest|child|named)\b", re.I)),
    ("item", re.compile(r"\b(sword|key|book|ring|lamp|item|blade|map|coin)\b", re.I)),
    ("event", re.compile(r"\b(storm|festival|attack|happened|will happen|tonight)\b", re.I)),
    (
        "location",
        re.compile(
            r"\b(place|room|harbou?r|town|inn|street|hall|forest|lighthouse|tower|village|"
            r"island|castle|port|called)\b",
            re.I,
        ),
    ),
]
_NAMED = re.compile(r"\b(?:called|named)\s+((?:[A-Z][\w'-]*)(?:\s+[A-Z][\w'-]*)*)")


class DesignerSkill(BaseModel):
    """One skill structured from a designer's text."""

    model_config = ConfigDict(extra="forbid")

    face: Literal["player", "author", "designer"]
    category: str = Field(min_length=1, max_length=CATEGORY_MAX)
    name: str = Field(min_length=1, max_length=NAME_MAX)
    text: str = Field(min_length=1, max_length=SKILL_TEXT_MAX)

    @field_validator("category")
    @classmethod
    def _slug(cls, value: str) -> str:
        value = value.strip().lower()
        if not SLUG.match(value):
            raise ValueError("a category is a lowercase slug, such as 'tone'")
        return value

    @field_validator("name", "text")
    @classmethod
    def _visible(cls, value: str) -> str:
        if not has_visible_text(value):
            raise ValueError("must show some text")
        return value.strip()

    @classmethod
    def offline_answer(cls, context: DesignerTold, variant: int = 0) -> Self:
        """The offline narrator's skill: a "face: x" or "category: y" the text names (else
        the player face, and the first of tone, pacing, style, dialogue it mentions, else
        `tone`), its first sentence as the name, the text itself."""
        text = " ".join(context.text.split())
        face = _said(_FACE, text) or "player"
        category = _said(_CATEGORY, text) or next(
            (c for c in _CATEGORIES if re.search(rf"\b{c}\b", text, re.I)), "tone"
        )
        first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
        return cls(
            face=face,  # type: ignore[arg-type]  # the pattern allows only the three
            category=category,
            name=first[:60].rstrip(".!?") or "A skill",
            text=text[:SKILL_TEXT_MAX] or first,
        )


_FACE = re.compile(r"\bface:\s*(player|author|designer)\b", re.I)
_CATEGORY = re.compile(r"\bcategory:\s*([a-z0-9]+(?:-[a-z0-9]+)*)", re.I)
_CATEGORIES = ("tone", "pacing", "style", "dialogue")


def _said(pattern: re.Pattern[str], text: str) -> str | None:
    found = pattern.search(text)
    return found.group(1).lower() if found else None
