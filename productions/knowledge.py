"""The knowledge compiler: what one character may know, as the system prompt of DESIGN.md §3.

Every later part (productions, frames, memories) builds a character's prompt on this, so the
rules live here once:
- WORLD and SCENARIO are shared by all;
- YOU ARE: the speaker's own universal and internal truth (and style, example dialogue and
  the instructions of the card it was imported from, which no other character ever reads);
- YOUR AFFILIATIONS: universal and internal truth of the speaker's groups;
- OTHER PARTICIPANTS: universal and external truth of everyone else, their groups'
  universal and external truth, internal only where the speaker is a member too;
- KNOWN AFFILIATIONS: every group of every participant, universal and external, internal
  only where the speaker is a member.
A covert membership is seen only by fellow members of its group: to anyone else the persona
has no such group (neither listed with it nor, through it alone, among the known groups). A
persona's `known_as` is the name everyone else sees; its real name only it and fellow
members of a covert group it belongs to. A truth left empty is left out, with its label.

`knowledge_of` applies these rules once, into a `Knowledge` (data); `knowledge_sections`
renders it as the prompt and synthesis/sheet.py as the player's character sheet, so the two
cannot say different things. The prompt is a list of `Section`s, so later passes add theirs
(memories, recent experience) before `render` joins them.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from django.db.models import Prefetch, prefetch_related_objects

from authoring.imported import imported_instructions
from authoring.models import Affiliation, Membership, Persona, Scenario, World

Member = TypeVar("Member", Persona, Affiliation)


class SectionKey(StrEnum):
    """Which part of DESIGN.md §3 a section is."""

    WORLD = "world"
    SCENARIO = "scenario"
    YOU = "you"
    YOUR_AFFILIATIONS = "your_affiliations"
    OTHER_PARTICIPANTS = "other_participants"
    KNOWN_AFFILIATIONS = "known_affiliations"
    MEMORIES = "memories"
    RECENT_EXPERIENCE = "recent_experience"


@dataclass(frozen=True)
class Section:
    """One titled block of a prompt. An empty body leaves the title alone."""

    title: str
    body: str = ""
    key: SectionKey | None = None

    def render(self) -> str:
        return f"{self.title}\n{self.body}".rstrip()


def render(sections: Iterable[Section]) -> str:
    """The prompt text: the sections in order, separated by blank lines."""
    return "\n\n".join(section.render() for section in sections)


def memberships_prefetch(prefix: str = "") -> Prefetch:
    """What to prefetch so that compiling asks the database nothing: each persona's
    memberships (covert flags) with their groups, in the groups' own order.

    Args:
        prefix: the lookup path to the persona, e.g. "assistant__persona__".
    """
    return Prefetch(
        f"{prefix}memberships",
        queryset=Membership.objects.select_related("affiliation").order_by(
            "-affiliation__created_at"
        ),
    )


def memberships_attach(personas: Iterable[Persona], memberships: Iterable[Membership]) -> None:
    """Give each persona its memberships among `memberships` (read as `memberships_prefetch`
    reads them, in its order), exactly as prefetching would: compiling then asks nothing.
    For a read whose SQL is built once (lmix/prepared.py), which Django's prefetch is not."""
    by_persona: dict[int, list[Membership]] = {}
    for membership in memberships:
        by_persona.setdefault(membership.persona_id, []).append(membership)
    for persona in personas:
        # What `persona.memberships.all()` reads, here already read (Django's prefetch
        # leaves the same queryset in the same cache).
        queryset = persona.memberships.get_queryset()
        queryset._result_cache = by_persona.get(persona.pk, [])
        queryset._prefetch_done = True
        persona.__dict__.setdefault("_prefetched_objects_cache", {})["memberships"] = queryset


def knowledge_text(
    *, speaker: Persona, cast: Sequence[Persona], world: World, scenario: Scenario
) -> str:
    """The system prompt of one speaker, as text: `render(compile_knowledge(...))`."""
    return render(compile_knowledge(speaker=speaker, cast=cast, world=world, scenario=scenario))


@dataclass(frozen=True)
class GroupView:
    """An affiliation as the speaker sees it: its inside (`internal`) only from the inside,
    empty otherwise. Only what may be seen: no model instance rides along."""

    pk: object
    name: str
    universal: str
    external: str
    internal: str


@dataclass(frozen=True)
class MembershipView:
    """One group of a persona, as the speaker sees it. A covert one is seen only by the
    persona itself and fellow members."""

    group: GroupView
    covert: bool


@dataclass(frozen=True)
class ParticipantView:
    """Another participant as the speaker knows them: their public face, their real name
    only when the speaker may know it, and the groups the speaker may see them in."""

    pk: object  # the persona's
    public_name: str
    real_name: str | None  # None: the speaker knows only the public name
    universal: str
    external: str
    affiliations: list[MembershipView]


@dataclass(frozen=True)
class Knowledge:
    """Everything one speaker may know of the setting, itself and the others (DESIGN.md §3):
    what `compile_knowledge` renders into a prompt and the player's character sheet shows.
    The speaker's own persona is all theirs; everything else is only what they may see."""

    world: World
    scenario: Scenario
    speaker: Persona
    own: list[MembershipView]
    others: list[ParticipantView]
    known: list[GroupView]


def knowledge_of(
    *, speaker: Persona, cast: Sequence[Persona], world: World, scenario: Scenario
) -> Knowledge:
    """What one speaker may know, as data: the one place the visibility rules live. Pure when
    the personas' memberships are prefetched (`memberships_prefetch`); otherwise those not
    yet loaded are, in one query, and kept on the instances.

    Args:
        speaker: the persona whose knowledge this is.
        cast: every participating persona (the speaker may be among them).
        world, scenario: the production's setting.
    """
    _memberships_load([speaker, *cast])
    own = _memberships_of(speaker)
    member_of = {membership.affiliation_id for membership in own}
    others = _unique(persona for persona in cast if persona.pk != speaker.pk)
    known = _unique(
        [m.affiliation for m in own]
        + [m.affiliation for other in others for m in _visible(other, member_of)]
    )
    return Knowledge(
        world=world,
        scenario=scenario,
        speaker=speaker,
        own=[MembershipView(_seen(m.affiliation, member_of), m.covert) for m in own],
        others=[_participant(other, member_of) for other in others],
        known=[_seen(group, member_of) for group in known],
    )


def compile_knowledge(
    *, speaker: Persona, cast: Sequence[Persona], world: World, scenario: Scenario
) -> list[Section]:
    """Compile the prompt of one speaker, section by section: `knowledge_sections` of
    `knowledge_of` (which says when this reads the database).

    Returns:
        WORLD, SCENARIO, YOU ARE, then YOUR AFFILIATIONS, OTHER PARTICIPANTS and KNOWN
        AFFILIATIONS when they have anything to say.
    """
    return knowledge_sections(
        knowledge_of(speaker=speaker, cast=cast, world=world, scenario=scenario)
    )


def knowledge_sections(knowledge: Knowledge) -> list[Section]:
    """A speaker's knowledge as the sections of its prompt."""
    world, scenario, speaker = knowledge.world, knowledge.scenario, knowledge.speaker
    sections = [
        Section(f"WORLD: {world.name}", world.description.strip(), SectionKey.WORLD),
        Section(f"SCENARIO: {scenario.name}", scenario.description.strip(), SectionKey.SCENARIO),
        Section(
            f"YOU ARE: {speaker.name}",
            _lines(
                _truths(
                    ("Known to others as", speaker.known_as),
                    ("Universal", speaker.universal_truth),
                    ("Internal (only you know this)", speaker.internal_truth),
                    ("Style", speaker.style),
                )
                + _example_dialogue(speaker)
                + _instructions(speaker)
            ),
            SectionKey.YOU,
        ),
    ]
    if knowledge.own:
        lines = []
        for membership in knowledge.own:
            group = membership.group
            name = f"{group.name} (covert: only fellow members know you belong)"
            lines += _item(
                name if membership.covert else group.name,
                _truths(
                    ("Universal", group.universal),
                    ("Internal (shared with members)", group.internal),
                ),
            )
        sections.append(Section("YOUR AFFILIATIONS:", _lines(lines), SectionKey.YOUR_AFFILIATIONS))
    if knowledge.others:
        lines = [line for other in knowledge.others for line in _participant_lines(other)]
        sections.append(
            Section("OTHER PARTICIPANTS:", _lines(lines), SectionKey.OTHER_PARTICIPANTS)
        )
    if knowledge.known:
        lines = [line for group in knowledge.known for line in _group_lines(group)]
        sections.append(
            Section("KNOWN AFFILIATIONS:", _lines(lines), SectionKey.KNOWN_AFFILIATIONS)
        )
    return sections


def public_name(persona: Persona) -> str:
    """The name everyone may know: its `known_as`, or its name when it has none."""
    return persona.known_as.strip() or persona.name


def name_for(persona: Persona, *, by: Persona) -> str:
    """The name `by` knows `persona` by: its real name for itself and for fellow members of
    a covert group it belongs to, its `known_as` (when it has one) for everyone else."""
    if persona.pk == by.pk or not persona.known_as.strip():
        return persona.name
    _memberships_load([persona, by])
    member_of = {membership.affiliation_id for membership in _memberships_of(by)}
    return persona.name if _knows_real_name(persona, member_of) else persona.known_as.strip()


def _participant(other: Persona, member_of: set) -> ParticipantView:
    known_as = other.known_as.strip()
    return ParticipantView(
        pk=other.pk,
        public_name=known_as or other.name,
        real_name=other.name if known_as and _knows_real_name(other, member_of) else None,
        universal=other.universal_truth,
        external=other.external_truth,
        affiliations=[
            MembershipView(_seen(m.affiliation, member_of), m.covert)
            for m in _visible(other, member_of)
        ],
    )


def _participant_lines(other: ParticipantView) -> list[str]:
    if other.real_name:
        heading = f"{other.real_name} (known to others as {other.public_name})"
    else:
        heading = other.public_name
    lines = _truths(
        ("Universal", other.universal),
        ("External (how you see them)", other.external),
    )
    if other.affiliations:
        lines.append("- Affiliations:")
        for membership in other.affiliations:
            group = membership.group
            name = f"{group.name} (covert: only fellow members know)"
            item = _group_lines(group, name if membership.covert else group.name)
            lines.extend(f"  {line}" for line in item)
    return _item(heading, lines)


def _visible(persona: Persona, member_of: set) -> list[Membership]:
    """The memberships of `persona` that someone in the groups `member_of` sees."""
    return [m for m in _memberships_of(persona) if not m.covert or m.affiliation_id in member_of]


def _knows_real_name(persona: Persona, member_of: set) -> bool:
    return any(m.covert and m.affiliation_id in member_of for m in _memberships_of(persona))


def _seen(group: Affiliation, member_of: set) -> GroupView:
    """A group as the speaker sees it: its inside only from the inside."""
    return GroupView(
        pk=group.pk,
        name=group.name,
        universal=group.universal_truth,
        external=group.external_truth,
        internal=group.internal_truth if group.pk in member_of else "",
    )


def _group_lines(group: GroupView, name: str | None = None) -> list[str]:
    return _item(
        name or group.name,
        _truths(
            ("Universal", group.universal),
            ("External", group.external),
            ("Internal (you are a member)", group.internal),
        ),
    )


def _example_dialogue(speaker: Persona) -> list[str]:
    """The speaker's sample lines, to copy its voice from; never anyone else's (they could
    show what a character knows)."""
    text = speaker.example_dialogue.strip()
    if not text:
        return []
    label = "- Example dialogue (your voice, not events of this scene):"
    return [label, *(f"  {line}".rstrip() for line in text.splitlines())]


def _instructions(speaker: Persona) -> list[str]:
    """What the card or template the speaker was imported from tells the model that plays
    it (its system prompt, behavioural rules…), bounded; never read for anyone else."""
    lines = imported_instructions(speaker.imported or {})
    if not lines:
        return []
    return ["- Instructions from your character card:", *(f"  {line}" for line in lines)]


def _truths(*layers: tuple[str, str]) -> list[str]:
    return [f"- {label}: {text.strip()}" for label, text in layers if text and text.strip()]


def _item(name: str, lines: list[str]) -> list[str]:
    return [f"- {name}", *(f"  {line}" for line in lines)]


def _lines(lines: list[str]) -> str:
    return "\n".join(lines)


def _memberships_load(personas: list[Persona]) -> None:
    # Only personas without prefetched memberships are loaded (all of them in one query).
    prefetch_related_objects(personas, memberships_prefetch())


def _memberships_of(persona: Persona) -> list[Membership]:
    # .all() on a prefetched relation reads the cache: no query per participant.
    return list(persona.memberships.all())


def _unique(items: Iterable[Member]) -> list[Member]:
    seen: set = set()
    unique = []
    for item in items:
        if item.pk not in seen:
            seen.add(item.pk)
            unique.append(item)
    return unique
