"""The secret guard: which outcome texts repeat a secret the actions did not reveal."""

from types import SimpleNamespace

from synthesis.guard import Secret, seat_secrets, secret_flags

TRUTH = Secret("internal_truth", "Bob Wilson", "He has skimmed the evidence locker for years.")
NAME = Secret("real_name", "Detective Johnson", "Bob Wilson")


def flags(said: str, revealed: str = "", secrets=(TRUTH, NAME), public=frozenset()) -> list[dict]:
    return secret_flags(said=[said], revealed=[revealed], secrets=secrets, public=public)


def test_a_repeated_run_of_a_secrets_words_is_flagged_with_whose_it_is():
    found = flags("Everyone hears that Johnson SKIMMED the evidence locker, it seems.")
    assert found == [
        {
            "kind": "internal_truth",
            "owner": "Bob Wilson",
            "excerpt": "skimmed the evidence locker",
            "source": "words",
        }
    ]


def test_a_secret_the_action_itself_revealed_is_not_flagged():
    said = "Bob confesses: he skimmed the evidence locker."
    assert flags(said, revealed="I confess: I skimmed the evidence locker.") == []


def test_common_phrases_and_scattered_words_are_not_a_secret():
    assert flags("He has been there for years, by the locker with the evidence.") == []


OARS = Secret("internal_truth", "Oskar Brand", "Oskar hid the spare oars in the boathouse.")


def test_one_rare_word_of_a_secret_in_a_models_text_gives_it_away():
    """A model that read the secret lets a word slip: a rare one is enough, a common one
    ("spare", "hid") never."""
    assert [f["excerpt"] for f in flags("I count the oars twice.", secrets=[OARS])] == ["oars"]
    assert (
        flags("Something is odd about the BOATHOUSE.", secrets=[OARS])[0]["owner"] == "Oskar Brand"
    )
    assert flags("I hid a spare key in the shed.", secrets=[OARS]) == []


def test_a_rare_word_everyone_knows_or_the_player_wrote_gives_nothing_away():
    public = frozenset({"oars", "oskar"})  # the scenario: "a rowing club short of oars"
    assert flags("I count the oars twice.", secrets=[OARS], public=public) == []
    said, asked = "Oskar counts the oars.", "I ask about the oars."
    assert flags(said, revealed=asked, secrets=[OARS], public=frozenset({"oskar"})) == []


def test_rare_words_are_those_the_tokenizer_spells_in_more_than_one_piece():
    from synthesis.guard import rare

    assert all(rare(w) for w in ["oars", "boathouse", "zebrafinch", "rosetti-secret-marker"])
    assert not any(rare(w) for w in ["spare", "money", "evidence", "brother", "ledger"])


def test_the_public_words_are_what_every_prompt_holds():
    from synthesis.guard import public_words

    group = SimpleNamespace(name="Rowing Club", universal_truth="Members row.", external_truth="")
    covert = SimpleNamespace(name="Smugglers", universal_truth="Night trips.", external_truth="")
    persona = SimpleNamespace(
        name="Oskar Brand",
        known_as="",
        universal_truth="Keeper of the boathouse.",
        external_truth="Gruff.",
        memberships=SimpleNamespace(
            all=lambda: [
                SimpleNamespace(affiliation=group, covert=False),
                SimpleNamespace(affiliation=covert, covert=True),
            ]
        ),
    )
    production = SimpleNamespace(
        world=SimpleNamespace(name="Fjord", description="A cold harbour."),
        scenario=SimpleNamespace(name="The ferry", description="It is missing."),
    )
    words = public_words([SimpleNamespace(persona=persona)], production)
    assert {"boathouse", "gruff", "rowing", "harbour", "ferry", "oskar"} <= words
    assert not {"smugglers", "night"} & words  # a covert group is no one's public knowledge


def test_a_real_name_behind_a_public_one_is_flagged_unless_the_action_said_it():
    assert flags("Detective Johnson, whose name is Bob Wilson, nods.")[0]["kind"] == "real_name"
    assert flags("Detective Johnson nods.") == []
    assert flags("Bob Wilson nods.", revealed="I tell them my name is Bob Wilson.") == []


def test_a_short_secret_counts_only_whole():
    short = Secret("internal_truth", "Ann", "Allergic to cats")
    assert flags("Ann is allergic to cats.", secrets=[short])
    assert flags("Ann is allergic to dust; cats purr.", secrets=[short]) == []


def test_the_secrets_of_a_seated_cast_are_its_inner_truths_groups_and_hidden_names():
    group = SimpleNamespace(pk=1, name="Undercover Unit", internal_truth="GROUP-SECRET")
    membership = SimpleNamespace(affiliation=group)

    def seat(name, truth, known_as="", memberships=()):
        persona = SimpleNamespace(
            name=name,
            internal_truth=truth,
            known_as=known_as,
            memberships=SimpleNamespace(all=lambda: list(memberships)),
        )
        return SimpleNamespace(persona=persona)

    secrets = seat_secrets(
        [
            seat("Bob Wilson", "B-SECRET", "Detective Johnson", [membership]),
            seat("Ann", "", "", [membership]),  # the group's secret is listed once
        ]
    )
    assert secrets == [
        Secret("internal_truth", "Bob Wilson", "B-SECRET"),
        Secret("real_name", "Detective Johnson", "Bob Wilson"),
        Secret("affiliation_internal_truth", "Undercover Unit", "GROUP-SECRET"),
    ]
