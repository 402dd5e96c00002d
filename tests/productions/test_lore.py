"""The lorebook: an entry is called up by its keys in the recent turns, reaches only the
speakers its layer allows (covert members included, outsiders never), and fits the budget."""

import itertools

import pytest

from authoring.models import Affiliation, LoreEntry, Membership, Persona, Scenario, World
from lmix.llm.tokens import count_tokens
from productions.lore import TITLE, lore_select, lore_triggered, recent_text
from productions.models import Turn
from productions.prompting import build_messages

_ids = itertools.count(1)


def persona(name: str, memberships: list[Membership] = ()) -> Persona:
    p = Persona(name=name, internal_truth=f"{name}-INTERNAL")
    p.pk = next(_ids)
    p._prefetched_objects_cache = {"memberships": list(memberships)}
    return p


def entry(content: str, *keys: str, **fields) -> LoreEntry:
    return LoreEntry(keys=list(keys), content=content, **{"enabled": True, **fields})


def said(text: str, status: str = "done") -> Turn:
    return Turn(speaker_kind="director", speaker_name="Director", content=text, status=status)


GUILD = Affiliation(name="Guild")
GUILD.pk = 7
# Vera and Otto belong to the guild, Vera covertly; Nell does not.
VERA = persona("VERA", [Membership(affiliation=GUILD, covert=True)])
OTTO = persona("OTTO", [Membership(affiliation=GUILD, covert=False)])
NELL = persona("NELL")
WORLD = World(name="Port", description="A port.", lore_scan_depth=2, lore_budget=500)
SCENARIO = Scenario(name="Dock", description="At the dock.")


def chosen(speaker: Persona, entries: list[LoreEntry], text: str, budget: int = 500) -> list[str]:
    picked = lore_select(entries=entries, speaker=speaker, text=text, budget=budget)
    return [e.content for e in picked]


def test_an_entry_is_called_up_by_a_whole_word_key_in_any_case():
    ring = entry("RING-LORE", "ring", "Sun Stone")
    assert lore_triggered(ring, "The RING glowed.")
    assert lore_triggered(ring, "she held the sun stone")
    assert lore_triggered(ring, "Is that the sun stone?")
    assert not lore_triggered(ring, "The bell kept ringing.")  # not a whole word
    assert not lore_triggered(ring, "A stone in the sun.")
    assert lore_triggered(entry("X", "C++"), "written in c++, sadly")


def test_without_its_key_in_the_recent_turns_an_entry_stays_out():
    ring = entry("RING-LORE", "ring")
    assert chosen(NELL, [ring], "Nothing about jewellery here.") == []
    # Only the last `lore_scan_depth` readable turns count; failed and empty ones never do.
    branch = [said("the ring"), said("one"), said("two"), said("the ring", status="failed")]
    assert recent_text(branch, 2) == "one\ntwo"
    assert "ring" in recent_text(branch, 3)
    assert recent_text(branch, 0) == ""


def test_a_disabled_entry_is_never_called_up():
    assert chosen(NELL, [entry("OFF", "ring", enabled=False)], "the ring") == []


def test_an_affiliation_entry_reaches_members_covert_ones_too_and_never_an_outsider():
    secret = entry("GUILD-LORE-MARKER", "vault", layer="affiliation", affiliation_id=GUILD.pk)
    public = entry("PUBLIC-LORE", "vault")
    for member in (VERA, OTTO):
        assert chosen(member, [secret, public], "Open the vault.") == [
            "GUILD-LORE-MARKER",
            "PUBLIC-LORE",
        ]
    assert chosen(NELL, [secret, public], "Open the vault.") == ["PUBLIC-LORE"]


def test_a_persona_entry_reaches_that_persona_alone():
    own = entry("VERA-LORE", "letter", layer="persona", persona_id=VERA.pk)
    assert chosen(VERA, [own], "a letter") == ["VERA-LORE"]
    assert chosen(OTTO, [own], "a letter") == chosen(NELL, [own], "a letter") == []


def test_the_budget_takes_entries_in_order_and_skips_what_does_not_fit():
    big = entry("big " * 60, "door")
    small = entry("small entry", "door")
    first = entry("first entry", "door")
    budget = count_tokens("- first entry") + count_tokens("- small entry")
    assert chosen(NELL, [first, big, small], "the door", budget=budget) == [
        "first entry",
        "small entry",
    ]
    assert chosen(NELL, [first, big, small], "the door", budget=0) == []


def test_the_prompt_of_an_outsider_never_holds_the_guild_entry_whatever_is_said():
    """Through build_messages, as a turn is compiled: the marker reaches the members'
    system prompts only, though everyone read the key."""
    lore = [entry("GUILD-LORE-MARKER", "vault", layer="affiliation", affiliation_id=GUILD.pk)]
    branch = [said("Who has the key to the vault?")]
    for speaker, member in ((VERA, True), (OTTO, True), (NELL, False)):
        messages, _ = build_messages(
            speaker=speaker,
            speaker_assistant_id=None,
            cast=[VERA, OTTO, NELL],
            world=WORLD,
            scenario=SCENARIO,
            branch=branch,
            model_id="fake",
            lore=lore,
        )
        sent = "\n".join(m.content for m in messages)
        assert ("GUILD-LORE-MARKER" in sent) is member, speaker.name
        assert (TITLE in messages[0].content) is member


@pytest.mark.parametrize("depth", [1, 2])
def test_the_scan_depth_is_the_worlds(depth):
    world = World(name="Port", description="d", lore_scan_depth=depth, lore_budget=500)
    branch = [said("the vault"), said("later")]
    messages, _ = build_messages(
        speaker=NELL,
        speaker_assistant_id=None,
        cast=[NELL],
        world=world,
        scenario=SCENARIO,
        branch=branch,
        model_id="fake",
        lore=[entry("VAULT-LORE", "vault")],
    )
    assert ("VAULT-LORE" in messages[0].content) is (depth == 2)
