"""Skills in a prompt: which a step takes (the most specific per category, none of the
step's NOT_FOR, within SKILLS_CHARS, the guards always), the section they make and the
record of which shaped it. The medium pass reads its rows in gather's batch
(medium/shaping.py); an AI seat's act and an epilogue read theirs with `seat_skills`.
"""

from typing import Any

from django.db.models import Q

from ..models import Face, Skill, SkillScope
from .loading import winning_skills

SKILLS_CHARS = 6000  # the whole section; guard skills always fit first
# The other step's rules: an outcome's are no narrative's, and a narrative's length no
# outcome's.
NOT_FOR = {
    "bones": {"word-budgets"},
    "narrative": {"outcome-rules"},
    # An AI seat's intention: neither how an outcome is resolved nor a narrative's length.
    "act": {"outcome-rules", "word-budgets", "orientation"},
    # An epilogue has its own length and resolves nothing.
    "epilogue": {"outcome-rules", "word-budgets"},
}


def chosen_skills(rows: list[Skill], step: str) -> list[Skill]:
    """The skills a step's prompt holds, in order, within SKILLS_CHARS: every guard skill,
    then the others (most specific in each category, none of the step's NOT_FOR) while
    they fit."""
    chosen = [s for s in winning_skills(rows) if s.category not in NOT_FOR[step]]
    guards = [s for s in chosen if s.guard]
    room = SKILLS_CHARS - sum(len(s.text) for s in guards)
    kept = []
    for skill in (s for s in chosen if not s.guard):
        if len(skill.text) <= room:
            kept.append(skill)
            room -= len(skill.text)
    return kept + guards


def seat_skills(*, frame_id: object, user_id: object | None, step: str) -> list[Skill]:
    """The player face's skills of a pass outside the medium's gather (an AI seat's act,
    an epilogue): the platform's, the frame's and, given `user_id` (the seat's player; none
    for an AI seat or a shared frame's epilogue, which others read), that user's own. One
    query; chosen as the medium pass's are (`chosen_skills`)."""
    scopes = Q(scope=SkillScope.PLATFORM) | Q(scope=SkillScope.FRAME, frame=frame_id)
    if user_id is not None:
        scopes |= Q(scope=SkillScope.USER, owner=user_id)
    return chosen_skills(Skill.objects.filter(scopes, face=Face.PLAYER), step)


def skills_section(skills: list[Skill]) -> str:
    """The skills as a prompt section, titled as the medium pass's (sections.txt)."""
    if not skills:
        return ""
    title = 'HOW TO WRITE IT (skills: those marked "always" hold whatever else says)'
    return "\n".join([title, *skill_lines(skills)])


def skill_refs(skills: list[Skill]) -> list[dict[str, Any]]:
    """Which skill supplied which part of a directive, for the GM (a pass's `messages`)."""
    return [
        {"id": str(s.pk), "scope": s.scope, "category": s.category, "name": s.name} for s in skills
    ]


def skill_lines(skills: list[Skill]) -> list[str]:
    """One item per skill: its name, then its text indented under it (a skill's own lines
    never start a line of the prompt)."""
    return [
        f"- {' '.join(s.name.split())[:200]}{' (always)' if s.guard else ''}:\n"
        + "\n".join(f"  {line.strip()}" for line in s.text.splitlines() if line.strip())
        for s in skills
    ]
