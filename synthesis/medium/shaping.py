"""What shapes a medium pass beyond its scene, as components of its prompt
(components.py): the skills of the player face (synthesis/skills: the platform's, the
frame's, and for a character's own narrative its player's) and the frame's world content
(synthesis/content.py). Each is one statement in gather's batch, whatever the cast's size.

Skills come first in the user message, the guard skills last among them; world content
comes after, chosen when a frame holds more than the prompt takes: the entries the scene
names first, then those that matter at the pass's scale or a larger one, then the newest.
"""

from typing import Any

from django.db.models import Q

from lmix.prepared import Param, Prepared

from ..models import Content, Face, Seat, Skill, SkillScope
from ..skills import winning_skills
from .components import Component, component_register, loaded
from .context import MediumContext, flat

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
CONTENT_READ = 40  # the newest entries a prompt chooses from
CONTENT_SHOWN = 12
CONTENT_LINE = 600

_PLAYER_SKILLS = Q(face=Face.PLAYER) & (
    Q(scope=SkillScope.PLATFORM) | Q(scope=SkillScope.FRAME, frame=Param(Skill, "frame"))
)
PUBLIC_SKILLS = Prepared(lambda: Skill.objects.filter(_PLAYER_SKILLS))
# The seat's player's own skills too: who plays the seat now, read in the same statement.
OWN_SKILLS = Prepared(
    lambda: Skill.objects.filter(
        _PLAYER_SKILLS
        | Q(
            face=Face.PLAYER,
            scope=SkillScope.USER,
            owner__in=Seat.objects.filter(pk=Param(Seat, "pk", name="seat")).values("user"),
        )
    )
)
FRAME_CONTENT = Prepared(
    lambda: Content.objects.filter(frame=Param(Content, "frame")).order_by("-created_at", "-id")[
        :CONTENT_READ
    ]
)


def prompt_skills(ctx: MediumContext, step: str) -> list[Skill]:
    """The skills this step's prompt holds (`chosen_skills` of what gather read)."""
    names = ("own_skills", "narrative_skills", "skills")
    rows = next((loaded(ctx, name) for name in names if name in ctx.loaded), [])
    return chosen_skills(rows, step)


def seat_skills(*, frame_id: object, user_id: object | None, step: str) -> list[Skill]:
    """The player face's skills of a pass outside the medium's gather (an AI seat's act,
    an epilogue): the platform's, the frame's and, given `user_id` (the seat's player; none
    for an AI seat or a shared frame's epilogue, which others read), that user's own. One
    query; chosen as `prompt_skills` chooses."""
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


def skill_refs(skills: list[Skill]) -> list[dict[str, Any]]:
    """Which skill supplied which part of a directive, for the GM (a pass's `messages`)."""
    return [
        {"id": str(s.pk), "scope": s.scope, "category": s.category, "name": s.name} for s in skills
    ]


def skill_lines(skills: list[Skill]) -> list[str]:
    """One item per skill: its name, then its text indented under it (a skill's own lines
    never start a line of the prompt)."""
    return [
        f"- {flat(s.name, 200)}{' (always)' if s.guard else ''}:\n"
        + "\n".join(f"  {line.strip()}" for line in s.text.splitlines() if line.strip())
        for s in skills
    ]


def _content_line(entry: Content) -> str:
    details = "; ".join(
        f"{flat(k, 40)}: {flat(v, 300)}" for k, v in entry.data.items() if k != "description"
    )
    description = flat(entry.data.get("description", ""), 400)
    line = f"- [{entry.type}] {flat(entry.name, 120)}: {description}"
    return f"{line} ({details})" if details else line


def world_entries(ctx: MediumContext) -> list[Content]:
    """The entries a prompt holds, least relevant first: those the scene names (its
    actions, the intentions under way, the outcomes it reads) rank first, then those that
    matter at this pass's scale or larger, then the newest."""
    entries = loaded(ctx, "world")  # newest first
    said = " ".join(
        [a.text for a in ctx.to_resolve + ctx.pending]
        + [str(o.world_facts) + str(o.actions_resolved) for o in ctx.outcomes]
    ).lower()
    ranked = sorted(
        enumerate(entries),
        key=lambda pair: (
            pair[1].name.lower() not in said,
            pair[1].pscale < ctx.pscale,
            pair[0],  # newest first
        ),
    )
    return [entry for _, entry in ranked[:CONTENT_SHOWN]][::-1]


for _component in (
    Component(
        "skills",
        lambda ctx, _: skill_lines(prompt_skills(ctx, "bones")),
        items_max=40,
        item_max=SKILLS_CHARS,
        read=lambda pass_: PUBLIC_SKILLS.read(frame=pass_.frame_id),
    ),
    Component(
        "narrative_skills",
        lambda ctx, _: skill_lines(prompt_skills(ctx, "narrative")),
        items_max=40,
        item_max=SKILLS_CHARS,
        read=lambda pass_: PUBLIC_SKILLS.read(frame=pass_.frame_id),
    ),
    Component(
        "own_skills",
        lambda ctx, _: skill_lines(prompt_skills(ctx, "narrative")),
        items_max=40,
        item_max=SKILLS_CHARS,
        private=True,  # the player's own skills shape their own narrative only
        read=lambda pass_: OWN_SKILLS.read(frame=pass_.frame_id, seat=pass_.seat_id),
    ),
    Component(
        "world",
        lambda ctx, _: [_content_line(c) for c in world_entries(ctx)],
        items_max=CONTENT_SHOWN,
        item_max=CONTENT_LINE + 400,
        read=lambda pass_: FRAME_CONTENT.read(frame=pass_.frame_id),
    ),
):
    component_register(_component)
