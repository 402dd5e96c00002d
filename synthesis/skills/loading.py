"""Which skills shape a pass: one query, then precedence by scope within each category."""

from collections.abc import Iterable
from typing import Any

from django.db.models import Q

from ..models import Frame, Skill, SkillScope

SPECIFICITY = {SkillScope.PLATFORM: 0, SkillScope.FRAME: 1, SkillScope.USER: 2}


def guarded_categories(skills: Iterable[Skill]) -> set[tuple[str, str]]:
    """(face, category) pairs a platform guard skill holds."""
    return {(s.face, s.category) for s in skills if s.scope == SkillScope.PLATFORM and s.guard}


def winning_skills(skills: Iterable[Skill]) -> list[Skill]:
    """Per (face, category), the most specific of `skills`; a guarded category keeps its
    platform skill whatever a frame or a user wrote. Guard skills come last: the rules that
    hold whatever came before them."""
    skills = list(skills)
    guarded = guarded_categories(skills)
    best: dict[tuple[str, str], Skill] = {}
    for skill in skills:
        key = (skill.face, skill.category)
        if key in guarded and skill.scope != SkillScope.PLATFORM:
            continue
        if key not in best or SPECIFICITY[skill.scope] > SPECIFICITY[best[key].scope]:
            best[key] = skill
    return sorted(best.values(), key=lambda s: (s.guard, s.face, s.category))


def skills_for(face: str, *, frame: Frame | None = None, user: Any = None) -> list[Skill]:
    """The skills a pass of `face` uses: the platform's, the frame's (its GM's) and the
    user's (the player whose character the pass writes for; none for a pass everyone
    reads, such as an outcome)."""
    scopes = Q(scope=SkillScope.PLATFORM)
    if frame is not None:
        scopes |= Q(scope=SkillScope.FRAME, frame=frame)
    if user is not None and getattr(user, "is_authenticated", False):
        scopes |= Q(scope=SkillScope.USER, owner=user)
    return winning_skills(Skill.objects.filter(scopes, face=face))
