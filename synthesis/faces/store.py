"""Where an author's entry and a designer's skill land: a content entry (a new one, or an
edit of the one it names) and a frame skill (new, or replacing the frame's skill of its
face and category), each told to the table. Called under the frame's lock, in the
transaction that finishes the pass."""

from typing import Any

from django.utils import timezone

from lmix.errors import ApplicationError

from ..content import content_body
from ..event_types import ContentChanged, SkillAdded
from ..frame_events import notify_frame
from ..models import Content, Liquid, Skill, SkillScope
from ..skills.loading import guarded_categories
from ..skills.services import GUARDED
from .schemas import AuthorEntry, DesignerSkill


def author_target(liquid: Liquid, entry: AuthorEntry) -> Content | None:
    """The entry an author's answer refines: one of the same type and name, else the one
    its `extends` names (case aside); None for a new entry."""
    same = Content.objects.filter(
        frame_id=liquid.frame_id, type=entry.type, name__iexact=entry.name
    )
    found = same.first()
    if found is None and entry.extends:
        found = (
            Content.objects.filter(frame_id=liquid.frame_id, name__iexact=entry.extends.strip())
            .order_by("created_at")
            .first()
        )
    return found


def author_store(liquid: Liquid, entry: AuthorEntry) -> dict[str, Any]:
    """Store the entry; the liquid's result says what it made.

    An entry of the same type and name as one the frame has, or naming one in `extends`,
    is an edit of it (its fields merged, the edit recorded with the author), never a
    duplicate.
    """
    target = author_target(liquid, entry)
    if target is None:
        stored = Content.objects.create(
            frame_id=liquid.frame_id,
            type=entry.type,
            name=entry.name,
            data=entry.data(),
            pscale=entry.pscale,
            author_id=liquid.author_id,
            source_liquid=liquid,
        )
        event = "content.added"
    else:
        target.data = {**target.data, **entry.data()}
        target.pscale = entry.pscale
        target.edited_by_id, target.edited_at = liquid.author_id, timezone.now()
        target.save(update_fields=["data", "pscale", "edited_by", "edited_at"])
        stored, event = target, "content.edited"
    notify_frame(liquid.frame_id, ContentChanged, type=event, content=content_body(stored))
    return {
        "kind": "content",
        "id": str(stored.pk),
        "name": stored.name,
        "type": stored.type,
        "edited": target is not None,
    }


def designer_store(liquid: Liquid, skill: DesignerSkill) -> dict[str, Any]:
    """Store the skill as the frame's: a new one, or in place of the frame's skill of that
    face and category (replaced: its name and text, recorded in the result).

    Raises:
        ApplicationError: the category is a platform guard's (the pass fails, saying so).
    """
    platform = Skill.objects.filter(
        scope=SkillScope.PLATFORM, face=skill.face, category=skill.category
    )
    if (skill.face, skill.category) in guarded_categories(platform):
        raise ApplicationError(GUARDED.format(face=skill.face, category=skill.category))
    existing = (
        Skill.objects.select_for_update()
        .filter(
            scope=SkillScope.FRAME,
            frame_id=liquid.frame_id,
            face=skill.face,
            category=skill.category,
        )
        .first()
    )
    if existing is None:
        stored = Skill.objects.create(
            scope=SkillScope.FRAME,
            frame_id=liquid.frame_id,
            face=skill.face,
            category=skill.category,
            name=skill.name,
            text=skill.text,
        )
    else:
        existing.name, existing.text = skill.name, skill.text
        existing.save(update_fields=["name", "text", "updated_at"])
        stored = existing
    body = {
        "id": str(stored.pk),
        "face": stored.face,
        "category": stored.category,
        "name": stored.name,
        "replaced": existing is not None,
        "liquid": str(liquid.pk),
    }
    notify_frame(liquid.frame_id, SkillAdded, type="skill.added", skill=body)
    return {"kind": "skill", **{k: body[k] for k in ("id", "name", "face", "category", "replaced")}}
