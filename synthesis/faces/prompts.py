"""The author and designer passes' prompts: the face's skills (`skills_for`), the frame's
content for an author, and the writer's text. Never a character's knowledge: what these
passes make is read by everyone and by every later pass."""

from pathlib import Path

from lmix.llm.base import Message

from ..models import Content, Face, Frame, Liquid, Skill
from ..skills.loading import skills_for

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "synthesis"
USER_PART = "=== USER ==="
CONTENT_IN_PROMPT = 60  # the newest entries an author pass reads
DESCRIPTION_IN_PROMPT = 300  # characters of each entry's description
NONE = "(none yet)"


def _template(name: str) -> tuple[str, str]:
    system, user = (TEMPLATES / name).read_text().split(f"\n{USER_PART}\n")
    return system.strip(), user.strip()


def skills_section(skills: list[Skill]) -> str:
    """The skills as the prompt shows them, guard skills last (`winning_skills`' order)."""
    return "\n\n".join(f"## {s.name}\n{s.text.strip()}" for s in skills) or NONE


def content_lines(frame: Frame) -> list[tuple[str, str, str]]:
    """The frame's newest entries, oldest first: (type, name, description cut short)."""
    rows = Content.objects.filter(frame=frame).order_by("-created_at", "-id")[:CONTENT_IN_PROMPT]
    return [
        (
            c.type,
            c.name,
            " ".join(str(c.data.get("description", "")).split())[:DESCRIPTION_IN_PROMPT],
        )
        for c in list(rows)[::-1]
    ]


def compile_author(
    liquid: Liquid, frame: Frame, content: list[tuple[str, str, str]]
) -> list[Message]:
    """The author pass's messages: the world's public setting, the author skills, the
    frame's content and the author's text."""
    system, user = _template("author.txt")
    world = frame.production.world
    skills = skills_for(Face.AUTHOR, frame=frame, user=liquid.author)
    system = system.format(
        world=(world.description.strip() if world and world.description else NONE),
        skills=skills_section(skills),
    )
    lines = "\n".join(f"{t}: {n}: {d}" for t, n, d in content) or NONE
    return [
        Message("system", system),
        Message("user", user.format(content=lines, text=liquid.content)),
    ]


def compile_designer(liquid: Liquid, frame: Frame) -> list[Message]:
    system, user = _template("designer.txt")
    skills = skills_for(Face.DESIGNER, frame=frame, user=liquid.author)
    system = system.format(skills=skills_section(skills))
    return [Message("system", system), Message("user", user.format(text=liquid.content))]
