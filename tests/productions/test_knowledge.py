"""The knowledge compiler: each speaker's prompt holds exactly the markers it may know."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmix.models import Affiliation, Persona, Scenario, World
from productions.knowledge import compile_knowledge

WORLD = World(name="W", description="world-marker")
SCENARIO = Scenario(name="S", description="scenario-marker")


class FakeRelation(list):
    """Stands in for a prefetched many-to-many manager."""

    def all(self) -> list:
        return self


def persona(pk: int, groups: list[Affiliation]) -> Persona:
    p = Persona(
        name=f"P{pk}",
        universal_truth=f"P{pk}-UNIVERSAL",
        internal_truth=f"P{pk}-INTERNAL",
        external_truth=f"P{pk}-EXTERNAL",
    )
    p.pk = pk
    p.__dict__["_fake_groups"] = FakeRelation(groups)
    return p


def group(pk: int) -> Affiliation:
    g = Affiliation(
        name=f"G{pk}",
        universal_truth=f"G{pk}-UNIVERSAL",
        internal_truth=f"G{pk}-INTERNAL",
        external_truth=f"G{pk}-EXTERNAL",
    )
    g.pk = pk
    return g


@pytest.fixture(autouse=True)
def fake_affiliations(monkeypatch):
    monkeypatch.setattr(
        Persona, "affiliations", property(lambda self: self.__dict__["_fake_groups"])
    )


def allowed_markers(speaker: Persona, cast: list[Persona]) -> set[str]:
    """The rule of DESIGN.md §3, written independently of the compiler."""
    allowed = {"world-marker", "scenario-marker"}
    allowed |= {f"P{speaker.pk}-UNIVERSAL", f"P{speaker.pk}-INTERNAL"}
    mine = {g.pk for g in speaker.affiliations.all()}
    for member in cast:
        if member.pk != speaker.pk:
            allowed |= {f"P{member.pk}-UNIVERSAL", f"P{member.pk}-EXTERNAL"}
        for g in member.affiliations.all():
            allowed |= {f"G{g.pk}-UNIVERSAL", f"G{g.pk}-EXTERNAL"}
            if g.pk in mine:
                allowed.add(f"G{g.pk}-INTERNAL")
    return allowed


def all_markers(cast: list[Persona], groups: list[Affiliation]) -> set[str]:
    markers = {"world-marker", "scenario-marker"}
    for p in cast:
        markers |= {f"P{p.pk}-{layer}" for layer in ("UNIVERSAL", "INTERNAL", "EXTERNAL")}
    for g in groups:
        markers |= {f"G{g.pk}-{layer}" for layer in ("UNIVERSAL", "INTERNAL", "EXTERNAL")}
    return markers


@st.composite
def casts(draw):
    groups = [group(pk) for pk in range(1, draw(st.integers(0, 4)) + 1)]
    size = draw(st.integers(2, 6))
    cast = []
    for pk in range(1, size + 1):
        chosen = draw(st.lists(st.sampled_from(groups), unique_by=lambda g: g.pk)) if groups else []
        cast.append(persona(pk, chosen))
    return cast, groups


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(casts())
def test_every_speaker_knows_exactly_what_it_may(cast_and_groups):
    cast, groups = cast_and_groups
    markers = all_markers(cast, groups)
    for speaker in cast:
        prompt = compile_knowledge(speaker=speaker, cast=cast, world=WORLD, scenario=SCENARIO)
        present = {marker for marker in markers if marker in prompt}
        assert present == allowed_markers(speaker, cast), speaker.name


def test_empty_truths_are_left_out_cleanly():
    lonely = persona(1, [])
    lonely.internal_truth = ""
    other = persona(2, [])
    other.external_truth = "   "
    prompt = compile_knowledge(speaker=lonely, cast=[lonely, other], world=WORLD, scenario=SCENARIO)
    assert "Internal" not in prompt and "External" not in prompt
    assert "YOUR AFFILIATIONS" not in prompt and "KNOWN AFFILIATIONS" not in prompt
    assert "\n\n\n" not in prompt and ": \n" not in prompt


class TestSeedExample:
    """Bob knows the NYPD's inside and the Rosettis' public face; Tony the reverse."""

    @pytest.fixture(autouse=True)
    def cast(self):
        nypd = group(1)
        nypd.name, nypd.internal_truth = "NYPD", "Murphy takes bribes on Tuesdays."
        nypd.external_truth = "By the book, incorruptible."
        mob = group(2)
        mob.name, mob.internal_truth = "Rosetti", "Control construction and waste."
        mob.external_truth = "Community leaders, generous donors."
        self.bob = persona(1, [nypd])
        self.bob.internal_truth = "Hates lying to people."
        self.tony = persona(2, [mob])
        self.tony.internal_truth = "Wants to go legitimate."
        self.alice = persona(3, [])

    def prompt(self, speaker):
        return compile_knowledge(
            speaker=speaker, cast=[self.bob, self.tony, self.alice], world=WORLD, scenario=SCENARIO
        )

    def test_bob(self):
        prompt = self.prompt(self.bob)
        assert "Murphy takes bribes" in prompt and "Hates lying" in prompt
        assert "Community leaders" in prompt
        assert "Control construction" not in prompt and "go legitimate" not in prompt

    def test_tony(self):
        prompt = self.prompt(self.tony)
        assert "Control construction" in prompt and "go legitimate" in prompt
        assert "By the book" in prompt
        assert "Murphy takes bribes" not in prompt and "Hates lying" not in prompt
