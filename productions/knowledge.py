"""The knowledge compiler: what one character may know, as the system prompt of DESIGN.md §3.

Every later part (productions, frames, memories) builds a character's prompt on this, so the
rules live here once:
- WORLD and SCENARIO are shared by all;
- YOU ARE: the speaker's own universal and internal truth (and style);
- YOUR AFFILIATIONS: universal and internal truth of the speaker's groups;
- OTHER PARTICIPANTS: universal and external truth of everyone else, their groups'
  universal and external truth, internal only where the speaker is a member too;
- KNOWN AFFILIATIONS: every group of every participant, universal and external, internal
  only where the speaker is a member.
A truth left empty is left out, with its label.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from lmix.models import Affiliation, Persona, Scenario, World

Member = TypeVar("Member", Persona, Affiliation)


@dataclass(frozen=True)
class Section:
    title: str
    lines: list[str]

    def render(self) -> str:
        return "\n".join([f"{self.title}", *self.lines]).rstrip()


def compile_knowledge(
    *, speaker: Persona, cast: Sequence[Persona], world: World, scenario: Scenario
) -> str:
    """Compile the system prompt of one speaker. Pure: no database access.

    Args:
        speaker: the persona whose knowledge this is; its `affiliations` prefetched.
        cast: every participating persona (the speaker may be among them), affiliations
            prefetched.
        world, scenario: the production's setting.
    Returns:
        The prompt text, sections separated by blank lines.
    """
    own_groups = _groups_of(speaker)
    member_of = {group.pk for group in own_groups}
    others = _unique(persona for persona in cast if persona.pk != speaker.pk)

    sections = [
        Section(f"WORLD: {world.name}", [world.description.strip()]),
        Section(f"SCENARIO: {scenario.name}", [scenario.description.strip()]),
        Section(
            f"YOU ARE: {speaker.name}",
            _truths(
                ("Universal", speaker.universal_truth),
                ("Internal (only you know this)", speaker.internal_truth),
                ("Style", speaker.style),
            ),
        ),
    ]
    if own_groups:
        sections.append(
            Section(
                "YOUR AFFILIATIONS:",
                [
                    line
                    for group in own_groups
                    for line in _item(
                        group.name,
                        _truths(
                            ("Universal", group.universal_truth),
                            ("Internal (shared with members)", group.internal_truth),
                        ),
                    )
                ],
            )
        )
    if others:
        sections.append(
            Section(
                "OTHER PARTICIPANTS:",
                [line for other in others for line in _participant(other, member_of)],
            )
        )
    known = _unique(group for persona in [speaker, *others] for group in _groups_of(persona))
    if known:
        sections.append(
            Section(
                "KNOWN AFFILIATIONS:",
                [line for group in known for line in _item(group.name, _seen(group, member_of))],
            )
        )
    return "\n\n".join(section.render() for section in sections)


def _participant(other: Persona, member_of: set) -> list[str]:
    lines = _truths(
        ("Universal", other.universal_truth),
        ("External (how you see them)", other.external_truth),
    )
    groups = _groups_of(other)
    if groups:
        lines.append("- Affiliations:")
        for group in groups:
            lines.extend(f"  {line}" for line in _item(group.name, _seen(group, member_of)))
    return _item(other.name, lines)


def _seen(group: Affiliation, member_of: set) -> list[str]:
    """A group as the speaker sees it: its inside only from the inside."""
    layers = [("Universal", group.universal_truth), ("External", group.external_truth)]
    if group.pk in member_of:
        layers.append(("Internal (you are a member)", group.internal_truth))
    return _truths(*layers)


def _truths(*layers: tuple[str, str]) -> list[str]:
    return [f"- {label}: {text.strip()}" for label, text in layers if text and text.strip()]


def _item(name: str, lines: list[str]) -> list[str]:
    return [f"- {name}", *(f"  {line}" for line in lines)]


def _groups_of(persona: Persona) -> list[Affiliation]:
    # .all() on a prefetched relation reads the cache: no query per participant.
    return list(persona.affiliations.all())


def _unique(items: Iterable[Member]) -> list[Member]:
    seen: set = set()
    unique = []
    for item in items:
        if item.pk not in seen:
            seen.add(item.pk)
            unique.append(item)
    return unique
