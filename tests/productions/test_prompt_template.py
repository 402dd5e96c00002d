"""Editable system prompt templates: placeholders expand to this speaker's own knowledge
only, the knowledge and lore are always there exactly once, and bad templates are refused."""

from hypothesis import given, settings
from hypothesis import strategies as st

from authoring.models import Affiliation, Membership, Persona, Scenario, World
from authoring.prompt_template import (
    PLACEHOLDERS,
    default_template,
    template_problems,
    template_render,
)
from productions.prompting import system_prompt

WORLD = World(name="Harbor", description="WORLD-DESCRIPTION-MARKER", lore_scan_depth=4)
SCENARIO = Scenario(name="Storm", description="SCENARIO-DESCRIPTION-MARKER")


def persona(pk: int, name: str, memberships: list[Membership] = ()) -> Persona:
    """A persona whose memberships are 'prefetched': compiling needs no database."""
    p = Persona(
        name=name,
        universal_truth=f"{name}-UNIVERSAL",
        internal_truth=f"{name}-INTERNAL-SECRET",
        external_truth=f"{name}-EXTERNAL",
    )
    p.pk = pk
    p._prefetched_objects_cache = {"memberships": list(memberships)}
    return p


GROUP = Affiliation(name="Smugglers", internal_truth="GROUP-INTERNAL-SECRET")
GROUP.pk = 1
ALICE = persona(1, "ALICE")
# Bob is a covert smuggler: Alice may know neither that nor the group's inside.
BOB = persona(2, "BOB", [Membership(affiliation=GROUP, covert=True)])
TONY = persona(3, "TONY")
# Text that looks like a placeholder, inside a truth Alice reads: it stays text.
TONY.universal_truth = "TONY-UNIVERSAL says {{knowledge}} and {{char}} a lot"
CAST = [ALICE, BOB, TONY]
FOREIGN = ("BOB-INTERNAL-SECRET", "TONY-INTERNAL-SECRET", "GROUP-INTERNAL-SECRET")

# Pieces a template may be made of: every placeholder, spelled in several ways, and text.
PIECES = [f"{{{{{name}}}}}" for name in PLACEHOLDERS] + [
    "{{ Knowledge }}",
    "{{LORE}}",
    "{{ char }}",
    "You are ",
    "Stay in character.",
    "\n",
    "\n\n",
    " ",
]


def prompt_for(speaker: Persona, template: str, lore: str = "") -> str:
    return system_prompt(
        speaker=speaker, cast=CAST, world=WORLD, scenario=SCENARIO, template=template, lore=lore
    )


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=14))
def test_whatever_the_template_the_speaker_gets_its_own_knowledge_once_and_no_other(pieces):
    template = "".join(pieces)
    if template_problems(template):
        return  # refused on save (tested below)
    prompt = prompt_for(ALICE, template, lore="LORE:\n- LORE-MARKER")
    assert prompt.count("ALICE-INTERNAL-SECRET") == 1
    assert prompt.count("WORLD-DESCRIPTION-MARKER") == 1
    assert prompt.count("SCENARIO-DESCRIPTION-MARKER") == 1
    assert prompt.count("LORE-MARKER") == 1
    for secret in FOREIGN:
        assert secret not in prompt
    # Another persona's truth that looks like a placeholder is never expanded.
    assert "TONY-UNIVERSAL says {{knowledge}} and {{char}} a lot" in prompt


def test_a_fellow_member_reads_the_group_secret_through_the_same_template():
    """The same template gives Bob what Bob may know: the marker test above is not vacuous."""
    prompt = prompt_for(BOB, "{{char}} of {{world}}: {{knowledge}}")
    assert prompt.startswith("BOB of Harbor: WORLD: Harbor")
    assert "BOB-INTERNAL-SECRET" in prompt and "GROUP-INTERNAL-SECRET" in prompt
    assert "ALICE-INTERNAL-SECRET" not in prompt


def test_a_template_without_the_knowledge_placeholder_gets_it_appended():
    prompt = prompt_for(ALICE, "You are {{char}}, talking to {{user}} in {{scenario}}.")
    intro, knowledge = prompt.split("\n\n", 1)
    assert intro == "You are ALICE, talking to the Director in Storm."
    assert knowledge.startswith("WORLD: Harbor") and "ALICE-INTERNAL-SECRET" in knowledge


def test_the_default_template_is_the_knowledge_then_the_orientation():
    assert template_problems(default_template()) == []
    prompt = prompt_for(ALICE, "")
    assert prompt.startswith("WORLD: Harbor\nWORLD-DESCRIPTION-MARKER")
    assert "You are ALICE, one character in a conversation" in prompt
    assert "{{" not in prompt.replace("{{knowledge}} and {{char}}", "")
    assert "\n\n\n" not in prompt  # no gap where the (empty) lore would be
    with_lore = prompt_for(ALICE, "", lore="LORE:\n- LORE-MARKER")
    assert with_lore.index("ALICE-INTERNAL") < with_lore.index("LORE-MARKER")
    assert with_lore.index("LORE-MARKER") < with_lore.index("You are ALICE")


def test_unknown_placeholders_are_named_and_enforced_ones_may_appear_once():
    (problem,) = template_problems("Hi {{char}} {{persona:BOB}} {{secrets}} {{ Secrets }}")
    assert problem.startswith("Unknown placeholders: {{Secrets}}, {{persona:BOB}}, {{secrets}}.")
    assert "{{knowledge}}" in problem  # says what may be used
    assert template_problems("{{knowledge}} {{KNOWLEDGE}} {{lore}}") == [
        "{{knowledge}} may appear only once."
    ]
    assert template_problems("{{char}} {{Char}} {{user}} {{director}} {{world}}") == []
    assert template_problems("single {braces} and {{ unclosed") == []


def test_a_template_stored_around_validation_still_places_knowledge_once():
    prompt = template_render(
        "{{knowledge}}\n{{knowledge}}\n{{unknown}}",
        char="A",
        world="W",
        scenario="S",
        knowledge="KNOWLEDGE-MARKER",
    )
    assert prompt.count("KNOWLEDGE-MARKER") == 1 and "{{unknown}}" in prompt
