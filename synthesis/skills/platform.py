"""The platform skills: markdown files in `files/`, each `<face>-<category>.md` with a
small header (face, category, name, guard), synced into the database after `migrate`."""

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.db import transaction

from ..models import Face, Skill, SkillScope

FILES = Path(__file__).resolve().parent / "files"
FENCE = "---"


@dataclass(frozen=True)
class PlatformSkill:
    key: str
    face: str
    category: str
    name: str
    guard: bool
    text: str


def parse(path: Path) -> PlatformSkill:
    """One skill file. Raises ValueError naming the file when it is malformed: a shipped
    file is a programming error, found by the test suite."""
    head, sep, body = (
        path.read_text(encoding="utf-8").removeprefix(FENCE + "\n").partition("\n" + FENCE + "\n")
    )
    if not sep:
        raise ValueError(f"{path.name}: no '---' header.")
    fields = dict(line.split(":", 1) for line in head.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    face, category = fields.get("face", ""), fields.get("category", "")
    if face not in Face.values or path.stem != f"{face}-{category}":
        raise ValueError(f"{path.name}: its name must be <face>-<category>.md of its header.")
    if not fields.get("name") or not body.strip():
        raise ValueError(f"{path.name}: a name and a text are needed.")
    return PlatformSkill(
        key=path.stem,
        face=face,
        category=category,
        name=fields["name"],
        guard=fields.get("guard", "false").lower() == "true",
        text=body.strip(),
    )


@cache
def shipped_skills() -> tuple[PlatformSkill, ...]:
    return tuple(parse(path) for path in sorted(FILES.glob("*.md")))


@transaction.atomic
def platform_skills_sync() -> None:
    """Make the platform skills in the database those the files ship: a new file adds
    one, a removed file removes it, a changed file replaces the text unless an admin edited
    it since the last sync (their edit stays). Face, category and guard always follow the
    file."""
    shipped = {s.key: s for s in shipped_skills()}
    Skill.objects.filter(scope=SkillScope.PLATFORM).exclude(key__in=shipped).delete()
    rows = {s.key: s for s in Skill.objects.select_for_update().filter(scope=SkillScope.PLATFORM)}
    for key, file in shipped.items():
        row = rows.get(key)
        if row is None:
            Skill.objects.create(
                scope=SkillScope.PLATFORM,
                key=key,
                face=file.face,
                category=file.category,
                name=file.name,
                guard=file.guard,
                text=file.text,
                shipped=file.text,
            )
            continue
        edited = row.text != row.shipped
        row.face, row.category, row.name, row.guard = (
            file.face,
            file.category,
            file.name,
            file.guard,
        )
        if not edited:
            row.text = file.text
        row.shipped = file.text
        row.save()
