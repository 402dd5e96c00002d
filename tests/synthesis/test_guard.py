"""The secret guard: which outcome texts repeat a secret the actions did not reveal."""

from types import SimpleNamespace

from synthesis.guard import Secret, seat_secrets, secret_flags

TRUTH = Secret("internal_truth", "Bob Wilson", "He has skimmed the evidence locker for years.")
NAME = Secret("real_name", "Detective Johnson", "Bob Wilson")


def flags(said: str, revealed: str = "", secrets=(TRUTH, NAME)) -> list[dict]:
    return secret_flags(said=[said], revealed=[revealed], secrets=secrets)


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
