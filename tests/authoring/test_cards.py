"""Character cards V2/V3 and LuminoraCore templates as persona drafts: real-format samples
map field by field, malformed ones are refused naming the problem, and what the prompt may
use of them is bounded and only the persona's own."""

import copy
import json
import re
from pathlib import Path

import pytest

from authoring.cards import book_truth, card_parse
from authoring.imported import INSTRUCTIONS_MAX, imported_instructions
from authoring.luminora import template_parse
from lmix.errors import ApplicationError
from lmix.models import TEXT_MAX

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def refusal(parse, data) -> str:
    with pytest.raises(ApplicationError) as caught:
        parse(data)
    assert caught.value.status_code == 400
    assert caught.value.details == {"file": [caught.value.message]}
    return caught.value.message


def test_a_v2_card_maps_to_persona_fields_and_keeps_the_rest():
    draft = card_parse(load("mira.v2.json"))
    fields, card = draft.fields, draft.imported["card"]
    assert fields["name"] == "Mira Vance"
    assert fields["universal_truth"].startswith("{{char}} is the harbour's lamplighter")
    assert fields["style"] == "wry, patient, distrustful of nobles"
    assert fields["greeting"].startswith("*Mira lowers her pole.*")
    assert fields["example_dialogue"].startswith("<START>")
    assert fields["tags"] == ["mystery", "Harbour", "female", "slow burn"]
    assert fields["known_as"] == ""
    # The book's enabled entries, in insertion order: the constant one as it is, the keyed
    # one after its keys; the disabled one is left out (but kept in the book).
    assert fields["internal_truth"] == (
        "Port Ardent is governed by the Salt Council, three old trading families.\n\n"
        "lighthouse, beacon: The lighthouse has been dark for nine years; Mira's key opens it."
    )
    assert card["character_book"] == load("mira.v2.json")["data"]["character_book"]
    assert card["scenario"] == "A storm is rolling into Port Ardent at dusk."
    assert card["system_prompt"].startswith("Write {{char}}'s replies")
    assert card["post_history_instructions"].startswith("Never reveal")
    assert card["creator_notes"] == "Works best in slow-burn mystery scenes."
    assert len(card["alternate_greetings"]) == 2
    assert card["extensions"]["depth_prompt"]["depth"] == 4
    assert (card["creator"], card["character_version"]) == ("lmix-tests", "1.2")


def test_a_v3_card_maps_its_nickname_and_keeps_its_own_fields():
    draft = card_parse(load("mira.v3.json"))
    card = draft.imported["card"]
    assert draft.fields["known_as"] == "the Lamplighter"
    assert card["group_only_greetings"] == ["*Mira counts the newcomers twice.*"]
    assert card["assets"][1]["uri"] == "https://example.org/harbour.webp"
    assert card["source"] == ["https://example.org/cards/mira"]
    assert card["creation_date"] == 1700000000
    assert card["creator_notes_multilingual"] == {"fr": "Idéal pour les scènes de mystère lentes."}
    assert "modification_date" not in card  # set afresh by each export
    assert "post_history_instructions" not in card  # empty: nothing to keep
    # Decorators are trimmed, and a regex key is no label.
    assert draft.fields["internal_truth"] == (
        "lighthouse: The lighthouse has been dark for nine years; Mira's key opens it.\n\n"
        "Storms in Port Ardent last exactly three nights."
    )


def test_unknown_card_fields_are_kept_for_export():
    card = load("mira.v2.json")
    card["data"]["x_future_field"] = {"kept": True}
    assert card_parse(card).imported["card"]["other"] == {"x_future_field": {"kept": True}}


def test_tags_a_persona_cannot_hold_are_kept_aside():
    card = load("mira.v2.json")
    card["data"]["tags"] = [f"t{i}" for i in range(22)] + ["x" * 41]
    draft = card_parse(card)
    assert draft.fields["tags"] == [f"t{i}" for i in range(20)]
    assert draft.imported["card"]["extra_tags"] == ["t20", "t21", "x" * 41]


def spoiled(path: str, value) -> dict:
    card = copy.deepcopy(load("mira.v2.json"))
    *parents, last = path.split(".")
    node = card
    for key in parents:
        node = node[int(key)] if key.isdigit() else node[key]
    if value is KeyError:
        del node[last]
    else:
        node[int(last) if last.isdigit() else last] = value
    return card


@pytest.mark.parametrize(
    ("card", "message"),
    [
        ([1, 2], "must be a JSON object"),
        (spoiled("spec", "chara_card_v1"), "`spec` is 'chara_card_v1'"),
        ({"name": "V1 card", "description": "flat"}, "`spec` is None"),
        (spoiled("data", "text"), "data must be an object"),
        (spoiled("data.name", KeyError), "data.name is missing"),
        (spoiled("data.name", "  "), "data.name must not be empty"),
        (spoiled("data.description", 3), "data.description must be a string"),
        (spoiled("data.tags", "mystery"), "data.tags must be a list of strings"),
        (spoiled("data.alternate_greetings", ["ok", 2]), r"data.alternate_greetings\[1\]"),
        (spoiled("data.extensions", []), "data.extensions must be an object"),
        (spoiled("data.description", "x" * (TEXT_MAX + 1)), "data.description is longer"),
        (spoiled("data.character_book.entries", {}), "entries must be a list"),
        (
            spoiled("data.character_book.entries.0.enabled", "yes"),
            r"entries\[0\].enabled must be true or false",
        ),
        (
            spoiled("data.character_book.entries.1.keys", [None]),
            r"entries\[1\].keys\[0\] must be a string",
        ),
        (spoiled("data.creator", "nul\x00"), "^data.creator holds a NUL character"),
    ],
)
def test_a_malformed_card_is_refused_naming_the_problem(card, message):
    assert re.search(message, refusal(card_parse, card))


def test_a_book_too_long_for_a_truth_is_refused():
    book = {"entries": [{"keys": [], "content": "x" * 15_000, "constant": True}] * 2}
    with pytest.raises(ApplicationError, match="too long to keep"):
        book_truth(book)


def test_a_luminoracore_template_maps_and_keeps_its_rules():
    draft = template_parse(load("captain.luminoracore.json"))
    fields, kept = draft.fields, draft.imported["luminoracore"]
    assert fields["name"] == "Captain Orla Finch"
    assert fields["universal_truth"].startswith("A retired airship captain")
    assert fields["tags"] == ["captain", "adventurous", "mentor"]
    assert fields["style"] == (
        "Adventurer; energetic; conversational. Tone: confident, warm, playful. Syntax: varied."
    )
    assert fields["greeting"] == "Right then, welcome aboard! Where are we bound today?"
    assert fields["example_dialogue"].startswith("User: I'm stuck on my essay.\nCaptain Orla")
    assert kept["behavioral_rules"][0].startswith("Frame problems as voyages")
    assert kept["persona"] == {
        "version": "1.0.0",
        "author": "lmix-tests",
        "language": "en",
        "compatibility": ["openai", "anthropic", "llama"],
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.pop("behavioral_rules"), "`behavioral_rules` is missing"),
        (lambda t: t["persona"].pop("name"), "persona.name is missing"),
        (lambda t: t.update(behavioral_rules="be nice"), "behavioral_rules must be a list"),
        (lambda t: t.update(behavioral_rules=[]), "at least one rule"),
        (lambda t: t["linguistic_profile"].update(tone="warm"), "linguistic_profile.tone"),
        (lambda t: t["advanced_parameters"].update(humor="high"), "advanced_parameters.humor"),
        (
            lambda t: t["examples"]["sample_responses"][0].pop("output"),
            r"sample_responses\[0\].output is missing",
        ),
    ],
)
def test_a_malformed_template_is_refused_naming_the_problem(change, message):
    template = load("captain.luminoracore.json")
    change(template)
    assert re.search(message, refusal(template_parse, template))


def test_the_prompt_gets_a_cards_instructions_and_a_templates_rules_bounded():
    card = card_parse(load("mira.v2.json")).imported
    assert imported_instructions(card) == [
        "Write {{char}}'s replies in third person, past tense, under 120 words.",
        "Never reveal the key's purpose before the lighthouse scene.",
    ]
    template = template_parse(load("captain.luminoracore.json")).imported
    lines = imported_instructions(template)
    assert lines[0] == "Rule: Frame problems as voyages with a heading and a destination"
    assert "Topics you avoid: real weapons, medical dosing" in lines
    long = {"card": {"system_prompt": "\n".join(["y" * 300] * 20)}}
    assert sum(len(line) for line in imported_instructions(long)) <= INSTRUCTIONS_MAX
    assert imported_instructions(long)[-1].endswith("…")
    assert imported_instructions({}) == []
