"""The knowledge compiler: each speaker's prompt holds exactly the markers it may know,
covert memberships and public names (known_as) included."""

import re

import pytest
from django.contrib.auth import get_user_model
from hypothesis import given, settings
from hypothesis import strategies as st

from authoring.demo import demo_seed
from authoring.models import Affiliation, Membership, Persona, Scenario, World
from productions.demo import demo_production_seed
from productions.knowledge import (
    Section,
    SectionKey,
    compile_knowledge,
    knowledge_text,
    name_for,
    render,
)
from productions.models import SpeakerKind, Turn, TurnStatus
from productions.prompting import build_messages
from productions.selectors import cast_load

WORLD = World(name="W", description="world-marker")
SCENARIO = Scenario(name="S", description="scenario-marker")


def persona(
    pk: int, groups: list[Affiliation], covert: set[int] = frozenset(), alias: bool = False
) -> Persona:
    """A persona whose memberships (`covert`: the covert groups' pks) are 'prefetched', so
    compiling never touches the database (these tests have none)."""
    p = Persona(
        name=f"P{pk}-NAME",
        known_as=f"P{pk}-ALIAS" if alias else "",
        universal_truth=f"P{pk}-UNIVERSAL",
        internal_truth=f"P{pk}-INTERNAL",
        external_truth=f"P{pk}-EXTERNAL",
    )
    p.pk = pk
    p._prefetched_objects_cache = {
        "memberships": [Membership(affiliation=g, covert=g.pk in covert) for g in groups]
    }
    return p


def group(pk: int) -> Affiliation:
    g = Affiliation(
        name=f"G{pk}-NAME",
        universal_truth=f"G{pk}-UNIVERSAL",
        internal_truth=f"G{pk}-INTERNAL",
        external_truth=f"G{pk}-EXTERNAL",
    )
    g.pk = pk
    return g


def joined(p: Persona) -> list[tuple[Affiliation, bool]]:
    """The test's own data: (group, covert) for each membership."""
    return [(m.affiliation, m.covert) for m in p._prefetched_objects_cache["memberships"]]


def visible_groups(speaker: Persona, member: Persona) -> set[int]:
    """The rule of DESIGN.md §3, written independently of the compiler: a membership is
    seen by everyone unless covert; a covert one only by the member and fellow members."""
    mine = {g.pk for g, _ in joined(speaker)}
    return {
        g.pk
        for g, covert in joined(member)
        if member.pk == speaker.pk or not covert or g.pk in mine
    }


def knows_real_name(speaker: Persona, member: Persona) -> bool:
    mine = {g.pk for g, _ in joined(speaker)}
    return (
        member.pk == speaker.pk
        or not member.known_as
        or any(covert and g.pk in mine for g, covert in joined(member))
    )


def allowed_markers(speaker: Persona, cast: list[Persona]) -> set[str]:
    allowed = {"world-marker", "scenario-marker"}
    allowed |= {f"P{speaker.pk}-UNIVERSAL", f"P{speaker.pk}-INTERNAL"}
    mine = {g.pk for g, _ in joined(speaker)}
    for member in [speaker, *cast]:
        if member.pk != speaker.pk:
            allowed |= {f"P{member.pk}-UNIVERSAL", f"P{member.pk}-EXTERNAL"}
        if member.known_as:
            allowed.add(f"P{member.pk}-ALIAS")
        if knows_real_name(speaker, member):
            allowed.add(f"P{member.pk}-NAME")
        for pk in visible_groups(speaker, member):
            allowed |= {f"G{pk}-NAME", f"G{pk}-UNIVERSAL", f"G{pk}-EXTERNAL"}
            if pk in mine:
                allowed.add(f"G{pk}-INTERNAL")
    return allowed


def all_markers(cast: list[Persona], groups: list[Affiliation]) -> set[str]:
    markers = {"world-marker", "scenario-marker"}
    for p in cast:
        markers |= {f"P{p.pk}-{x}" for x in ("NAME", "ALIAS", "UNIVERSAL", "INTERNAL", "EXTERNAL")}
    for g in groups:
        markers |= {f"G{g.pk}-{x}" for x in ("NAME", "UNIVERSAL", "INTERNAL", "EXTERNAL")}
    return markers


def participant_blocks(speaker: Persona, cast: list[Persona]) -> dict[int, str]:
    """OTHER PARTICIPANTS, one block per participant (a top-level "- " line and what is
    indented under it), keyed by the pk whose universal-truth marker the block holds."""
    sections = compile_knowledge(speaker=speaker, cast=cast, world=WORLD, scenario=SCENARIO)
    others = [s for s in sections if s.key == SectionKey.OTHER_PARTICIPANTS]
    if not others:
        return {}
    blocks = re.split(r"\n(?=- )", others[0].body)
    return {int(re.search(r"P(\d+)-UNIVERSAL", block).group(1)): block for block in blocks}


@st.composite
def casts(draw):
    groups = [group(pk) for pk in range(1, draw(st.integers(0, 4)) + 1)]
    size = draw(st.integers(2, 6))
    cast = []
    for pk in range(1, size + 1):
        chosen = draw(st.lists(st.sampled_from(groups), unique_by=lambda g: g.pk)) if groups else []
        covert = {g.pk for g in chosen if draw(st.booleans())}
        cast.append(persona(pk, chosen, covert=covert, alias=draw(st.booleans())))
    return cast, groups


@settings(max_examples=200, deadline=None)
@given(casts())
def test_every_speaker_knows_exactly_what_it_may(cast_and_groups):
    cast, groups = cast_and_groups
    markers = all_markers(cast, groups)
    for speaker in cast:
        prompt = knowledge_text(speaker=speaker, cast=cast, world=WORLD, scenario=SCENARIO)
        present = {marker for marker in markers if marker in prompt}
        assert present == allowed_markers(speaker, cast), speaker.name


@settings(max_examples=200, deadline=None)
@given(casts())
def test_a_participant_shows_only_the_groups_and_name_the_speaker_may_see(cast_and_groups):
    cast, groups = cast_and_groups
    for speaker in cast:
        blocks = participant_blocks(speaker, cast)
        assert set(blocks) == {p.pk for p in cast if p.pk != speaker.pk}
        for member in cast:
            if member.pk == speaker.pk:
                continue
            block = blocks[member.pk]
            named = {int(pk) for pk in re.findall(r"G(\d+)-NAME", block)}
            externals = {int(pk) for pk in re.findall(r"G(\d+)-EXTERNAL", block)}
            assert named == externals == visible_groups(speaker, member), (speaker, member)
            assert (f"P{member.pk}-NAME" in block) == knows_real_name(speaker, member)
            assert (f"P{member.pk}-ALIAS" in block) == bool(member.known_as)
            assert name_for(member, by=speaker) == (
                member.name if knows_real_name(speaker, member) else member.known_as
            )


def test_empty_truths_are_left_out_cleanly():
    lonely = persona(1, [])
    lonely.internal_truth = ""
    other = persona(2, [])
    other.external_truth = "   "
    prompt = knowledge_text(speaker=lonely, cast=[lonely, other], world=WORLD, scenario=SCENARIO)
    assert "Internal" not in prompt and "External" not in prompt
    assert "YOUR AFFILIATIONS" not in prompt and "KNOWN AFFILIATIONS" not in prompt
    assert "Known to others" not in prompt
    assert "\n\n\n" not in prompt and ": \n" not in prompt


def test_sections_render_to_the_compiled_text_and_take_more_sections():
    g = group(1)
    cast = [persona(1, [g]), persona(2, [g], covert={1}, alias=True), persona(3, [])]
    sections = compile_knowledge(speaker=cast[0], cast=cast, world=WORLD, scenario=SCENARIO)
    assert [s.key for s in sections] == [
        SectionKey.WORLD,
        SectionKey.SCENARIO,
        SectionKey.YOU,
        SectionKey.YOUR_AFFILIATIONS,
        SectionKey.OTHER_PARTICIPANTS,
        SectionKey.KNOWN_AFFILIATIONS,
    ]
    text = knowledge_text(speaker=cast[0], cast=cast, world=WORLD, scenario=SCENARIO)
    assert render(sections) == text
    assert text.startswith("WORLD: W\nworld-marker\n\nSCENARIO: S\nscenario-marker\n\nYOU ARE:")
    recent = Section("RECENT EXPERIENCE:", "- I saw the ship.", SectionKey.RECENT_EXPERIENCE)
    assert render([*sections, recent]) == f"{text}\n\nRECENT EXPERIENCE:\n- I saw the ship."
    assert Section("YOUR MEMORIES:").render() == "YOUR MEMORIES:"


class TestSeedExample:
    """Detective Johnson knows the NYPD's inside and the Rosettis' public face; Tony the
    reverse. Johnson is undercover as Bob Wilson: only his unit knows his name and his
    membership."""

    @pytest.fixture(autouse=True)
    def cast(self):
        nypd = group(1)
        nypd.name, nypd.internal_truth = "NYPD", "Murphy takes bribes on Tuesdays."
        nypd.external_truth = "By the book, incorruptible."
        mob = group(2)
        mob.name, mob.internal_truth = "Rosetti", "Control construction and waste."
        mob.external_truth = "Community leaders, generous donors."
        self.bob = persona(1, [nypd], covert={1}, alias=True)
        self.bob.name, self.bob.known_as = "Detective Johnson", "Bob Wilson"
        self.bob.internal_truth = "Hates lying to people."
        self.tony = persona(2, [mob])
        self.tony.internal_truth = "Wants to go legitimate."
        self.alice = persona(3, [])
        self.murphy = persona(4, [nypd])  # an openly known member of the unit
        self.murphy.name = "Lieutenant Murphy"

    def prompt(self, speaker):
        return knowledge_text(
            speaker=speaker,
            cast=[self.bob, self.tony, self.alice, self.murphy],
            world=WORLD,
            scenario=SCENARIO,
        )

    def test_bob(self):
        prompt = self.prompt(self.bob)
        assert "YOU ARE: Detective Johnson\n- Known to others as: Bob Wilson" in prompt
        assert "- NYPD (covert: only fellow members know you belong)" in prompt
        assert "Murphy takes bribes" in prompt and "Hates lying" in prompt
        assert "Community leaders" in prompt
        assert "Control construction" not in prompt and "go legitimate" not in prompt

    def test_tony_sees_a_patient_named_bob_wilson_without_his_unit(self):
        prompt = self.prompt(self.tony)
        assert "Control construction" in prompt and "go legitimate" in prompt
        assert "- Bob Wilson\n" in prompt and "Detective Johnson" not in prompt
        bob = prompt.split("- Bob Wilson\n")[1].split("\n- ")[0]
        assert "NYPD" not in bob and "By the book" not in bob
        # Murphy's membership is public, so the unit's public face is known, through him.
        assert "By the book" in prompt and "Affiliations:\n    - NYPD" in prompt
        assert "Murphy takes bribes" not in prompt and "Hates lying" not in prompt

    def test_alice_sees_no_unit_at_all_without_murphy(self):
        prompt = knowledge_text(
            speaker=self.alice, cast=[self.bob, self.alice], world=WORLD, scenario=SCENARIO
        )
        assert "NYPD" not in prompt and "By the book" not in prompt
        assert "Detective Johnson" not in prompt and "- Bob Wilson" in prompt
        assert "KNOWN AFFILIATIONS" not in prompt

    def test_a_fellow_member_knows_both_names_and_the_covert_membership(self):
        prompt = self.prompt(self.murphy)
        assert "- Detective Johnson (known to others as Bob Wilson)\n" in prompt
        assert "- NYPD (covert: only fellow members know)" in prompt
        assert name_for(self.bob, by=self.murphy) == "Detective Johnson"
        assert name_for(self.bob, by=self.tony) == "Bob Wilson"
        assert name_for(self.bob, by=self.bob) == "Detective Johnson"


@pytest.mark.django_db
def test_the_demo_keeps_the_undercover_detective_covert_in_every_prompt():
    """The showcase: Alice and Tony meet a patient named Bob Wilson, in the system prompt and
    in the transcript alike; only Johnson himself knows his name and his unit."""
    owner = get_user_model().objects.get(username=demo_seed()[0][0])
    production = demo_production_seed(owner=owner)
    cast = cast_load(production=production)
    johnson = next(a for a in cast if a.persona.name == "Detective Johnson")
    said = Turn(
        speaker_kind=SpeakerKind.ASSISTANT,
        assistant_id=johnson.pk,
        speaker_name=johnson.display_name,
        content="I just need to sleep again.",
        status=TurnStatus.DONE,
    )
    for assistant in cast:
        messages, _ = build_messages(
            speaker=assistant.persona,
            speaker_assistant_id=assistant.pk,
            cast=[a.persona for a in cast],
            world=production.world,
            scenario=production.scenario,
            branch=[said],
            model_id=assistant.model.model_id,
            voices={a.pk: a.persona for a in cast},
        )
        sent = "\n".join(message.content for message in messages)
        if assistant == johnson:
            assert "YOU ARE: Detective Johnson" in sent and "NYPD Undercover Unit" in sent
            continue
        assert "Detective Johnson" not in sent and "NYPD" not in sent, assistant.persona.name
        assert "investigating therapist fraud" not in sent
        assert "- Bob Wilson\n" in sent and "Bob Wilson: I just need to sleep again." in sent
