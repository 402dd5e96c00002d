"""The speaker rule: addressed by name first, else whoever spoke least recently."""

from productions.speaker import CastEntry, SpokenTurn, name_aliases, next_speaker

CAST = [
    CastEntry("alice", "Alice Thompson"),
    CastEntry("bob", "Bob Wilson / Detective Johnson"),
    CastEntry("tony", "Tony Rosetti"),
]


def test_the_first_in_cast_order_opens_an_empty_branch():
    assert next_speaker(CAST, []) == "alice"


def test_whoever_spoke_least_recently_speaks_next():
    branch = [SpokenTurn("alice", "Hello."), SpokenTurn("bob", "Hi."), SpokenTurn("tony", "Yo.")]
    assert next_speaker(CAST, branch) == "alice"
    assert next_speaker(CAST, branch[:2]) == "tony"  # never spoke yet


def test_a_participant_addressed_by_name_answers():
    branch = [
        SpokenTurn("alice", "Hello."),
        SpokenTurn("bob", "Hi."),
        SpokenTurn("alice", "So, Bob, what brings you here? Tony can wait."),
    ]
    assert next_speaker(CAST, branch) == "bob"
    branch[-1] = SpokenTurn("alice", "Detective Johnson, is it?")
    assert next_speaker(CAST, branch) == "bob"


def test_speakers_do_not_answer_themselves_and_partial_words_do_not_count():
    branch = [SpokenTurn("alice", "I am Alice, and I'm Tonyesque today.")]
    assert next_speaker(CAST, branch) == "bob"


def test_director_turns_address_people_too():
    branch = [SpokenTurn("alice", "Hello."), SpokenTurn(None, "Now Tony walks in.")]
    assert next_speaker(CAST, branch) == "tony"


def test_titles_are_not_aliases():
    aliases = name_aliases("Detective Johnson")
    assert "Johnson" in aliases and "Detective" not in aliases


def test_articles_and_ordinary_words_do_not_call_anyone():
    cast = [
        CastEntry("stranger", "The Stranger"),
        CastEntry("will", "Will Turner"),
        CastEntry("bob", "Bob"),
    ]
    assert (
        next_speaker(
            cast, [SpokenTurn("stranger", "Hello."), SpokenTurn("will", "I will wait, Bob.")]
        )
        == "bob"
    )
    assert next_speaker(cast, [SpokenTurn("will", "The door is open, Bob.")]) == "bob"
    assert next_speaker(cast, [SpokenTurn("bob", "Will, come here.")]) == "will"
    assert next_speaker(cast, [SpokenTurn("bob", "Who are you, Stranger?")]) == "stranger"
