"""What a model is sent: knowledge + orientation, then its branch from its own viewpoint."""

from lmix.llm.base import Message
from productions.models import Turn
from productions.prompting import OPENING_CUE, transcript


def turn(speaker_kind="assistant", assistant_id=None, name="X", content="", status="done"):
    return Turn(
        speaker_kind=speaker_kind,
        assistant_id=assistant_id,
        speaker_name=name,
        content=content,
        status=status,
    )


def test_own_turns_are_assistant_and_others_are_named_user_messages():
    branch = [
        turn(assistant_id=1, name="Alice", content="Hello."),
        turn(assistant_id=2, name="Bob", content="Hi Alice."),
        turn(speaker_kind="director", name="Director", content="Thunder."),
        turn(assistant_id=1, name="Alice", content="Oh!", status="stopped"),
        turn(assistant_id=2, name="Bob", content="ignored", status="failed"),
    ]
    assert transcript(speaker_assistant_id=2, branch=branch, names={1: "Alice"}) == [
        Message("user", "Alice: Hello."),
        Message("assistant", "Hi Alice."),
        Message("user", "[Director] Thunder.\n\nAlice: Oh!"),
    ]


def test_a_transcript_starts_and_ends_with_the_user():
    assert transcript(speaker_assistant_id=1, branch=[]) == [Message("user", OPENING_CUE)]
    messages = transcript(
        speaker_assistant_id=1, branch=[turn(assistant_id=1, name="Alice", content="Hi.")]
    )
    assert messages[0].role == "user" and messages[-1].role == "user"
    assert messages[1] == Message("assistant", "Hi.")
