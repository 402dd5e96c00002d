"""Writing frame and user skills. Platform skills are the files' and the admin's."""

from typing import Any

from django.db import IntegrityError, transaction

from lmix.errors import ApplicationError

from ..models import Frame, Skill, SkillScope
from .loading import guarded_categories

GUARDED = (
    "The {face} skills of category '{category}' are the platform's rules that keep secrets "
    "and agency: they cannot be replaced. Choose another category."
)
TAKEN = "There is already a {face} skill of category '{category}' here: edit that one instead."


def _check_category(face: str, category: str) -> None:
    platform = Skill.objects.filter(scope=SkillScope.PLATFORM, face=face, category=category)
    if (face, category) in guarded_categories(platform):
        raise ApplicationError(
            GUARDED.format(face=face, category=category),
            details={"category": ["A guard category: the platform's only."]},
        )


def _saved(skill: Skill) -> Skill:
    """Save, turning the one-per-category constraint into a 409 that says so."""
    try:
        with transaction.atomic():
            skill.save()
    except IntegrityError:
        raise ApplicationError(
            TAKEN.format(face=skill.face, category=skill.category), status_code=409
        ) from None
    return skill


def skill_create(
    *, owner: Any = None, frame: Frame | None = None, face: str, category: str, name: str, text: str
) -> Skill:
    """A user's skill (`owner`) or a frame's (`frame`, its GM's), one per face and
    category.

    Raises:
        ApplicationError: a guard category (400), the category already has a skill (409).
    """
    _check_category(face, category)
    scope = SkillScope.FRAME if frame is not None else SkillScope.USER
    return _saved(
        Skill(
            scope=scope,
            owner=None if frame is not None else owner,
            frame=frame,
            face=face,
            category=category,
            name=name,
            text=text,
        )
    )


def skill_update(*, skill: Skill, **changes: Any) -> Skill:
    """Change a frame or user skill's name, text, face or category.

    Raises:
        ApplicationError: a platform skill (403), a guard category (400), the category
            already has a skill (409).
    """
    if skill.scope == SkillScope.PLATFORM:
        raise ApplicationError(
            "Platform skills ship with LMiX: an administrator edits them in the admin.",
            status_code=403,
        )
    for field, value in changes.items():
        setattr(skill, field, value)
    _check_category(skill.face, skill.category)
    return _saved(skill)


def skill_delete(*, skill: Skill) -> None:
    if skill.scope == SkillScope.PLATFORM:
        raise ApplicationError(
            "Platform skills ship with LMiX and cannot be deleted.", status_code=403
        )
    skill.delete()
