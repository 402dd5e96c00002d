"""What shapes a medium pass beyond its scene, as components of its prompt
(components.py): the skills of the player face (synthesis/skills: the platform's, the
frame's, and for a character's own narrative its player's) and the frame's world content
(synthesis/content.py). Each is one statement in gather's batch, whatever the cast's size.

Skills come first in the user message, the guard skills last among them; world content
comes after, chosen when a frame holds more than the prompt takes: the entries the scene
names first, then those that matter at the pass's scale or a larger one, then the newest.
"""

from django.db.models import Q

from lmix.prepared import Param, Prepared

from ..models import Content, Face, Seat, Skill, SkillScope
from ..skills.prompting import SKILLS_CHARS, chosen_skills, skill_lines, skill_refs
from .components import Component, component_register, loaded
from .context import MediumContext, flat

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

# SKILLS_CHARS and skill_refs are read from here too (bones, flesh, tests).
__all__ = ["SKILLS_CHARS", "prompt_skills", "skill_refs", "world_entries"]
