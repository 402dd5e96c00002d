"""Names and secrets in what an AI seat writes (issue 23, item 8): its signature is taken
off, its assistant's label reaches no other character's prompt, and an intention that
gives away its real name is flagged to the GM and to nobody else."""

import pytest

from lmix.llm.base import Completion
from synthesis import ai_seats, events
from synthesis.ai_seats import ai_prompt, intention_text, seat_names
from synthesis.frame_selectors import FrameAccess, seats_load
from synthesis.guard import intention_flags, public_words
from synthesis.models import Frame, Liquid, Outcome
from synthesis.selectors import frame_view
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db

LABEL = "SMOL-LABEL-MARKER"
REAL = "Detective Johnson"
PUBLIC = "Bob Wilson"


@pytest.fixture(autouse=True)
def no_background(monkeypatch):
    from synthesis import tasks

    monkeypatch.setattr(tasks.soft_pass_task, "delay", lambda pass_id: None)
    monkeypatch.setattr(tasks.window_fire_task, "apply_async", lambda *a, **k: None)


@pytest.fixture
def scene(user):
    """Alice (a player), Johnson undercover as Bob Wilson and Tony, both on assistants
    whose labels carry a marker."""
    frame = make_frame(user, open_seats=1)
    player, _ = seat_player(frame, 0)
    alice, johnson, tony = frame.seats.order_by("position")
    johnson.persona.name, johnson.persona.known_as = REAL, PUBLIC
    johnson.persona.save()
    for seat in (johnson, tony):
        seat.assistant.name = f"{seat.persona.name} ({LABEL})"
        seat.assistant.save()
    return frame, player, alice, johnson, tony


def seat_of(frame: Frame, position: int):
    return next(s for s in seats_load(frame=frame) if s.position == position)


def answer_with(monkeypatch, text: str) -> None:
    monkeypatch.setattr(ai_seats, "llm_complete", lambda **kwargs: Completion(text))


SIGNED = [
    f"{PUBLIC}: I wave at the door.",
    f"**{PUBLIC}**: I wave at the door.",
    f"**{PUBLIC}:** I wave at the door.",
    f"{REAL} ({LABEL}): I wave at the door.",
    f"  {REAL.upper()} ({LABEL}) :  I wave at the door.",
    f"{REAL} ({LABEL}): {PUBLIC}: I wave at the door.",
    f"__{REAL} ({LABEL})__: I wave at the door.",
]


@pytest.mark.parametrize("text", SIGNED)
def test_a_leading_signature_by_any_of_the_seats_names_is_taken_off(scene, text):
    frame, *_ = scene
    assert intention_text(text, seat_names(seat_of(frame, 1))) == "I wave at the door."


@pytest.mark.parametrize(
    "text",
    [
        "I tell Bob Wilson: wave at the door.",  # a name inside the intention stays
        "Bobby: I wave at the door.",  # not one of its names
        "*I wave at the door.*",
    ],
)
def test_an_intention_without_its_own_signature_is_kept_as_written(scene, text):
    frame, *_ = scene
    assert intention_text(text, seat_names(seat_of(frame, 1))) == text


def test_the_assistants_label_is_in_no_prompt_of_another_character(scene):
    frame, _, alice, johnson, tony = scene
    outcome = Outcome.objects.create(
        frame=frame,
        seq=1,
        seat=johnson,
        actions_resolved=[{"seat": str(johnson.pk), "action": "I sit", "result": "success"}],
        interrupts=[{"seat": str(tony.pk), "reason": "Bob sits too close"}],
    )
    seats = seats_load(frame=frame)
    for seat in seats:
        if seat.pk == johnson.pk:
            continue
        sent = "\n".join(
            m.content for m in ai_prompt(seat=seat, seats=seats, recent=[outcome], outcome=outcome)
        )
        assert LABEL not in sent and REAL not in sent
        assert f"- {PUBLIC}: I sit (success)" in sent


def test_an_ai_seat_is_asked_to_say_only_its_public_name(scene):
    frame, _, _, johnson, _ = scene
    seats = seats_load(frame=frame)
    seat = next(s for s in seats if s.pk == johnson.pk)
    asked = ai_prompt(seat=seat, seats=seats, recent=[], outcome=None)[-1].content
    assert f"knows {REAL} as {PUBLIC}: say only that name aloud" in asked
    assert LABEL not in asked


def test_the_signature_is_off_what_the_ai_seat_stores(scene, monkeypatch):
    frame, _, _, johnson, _ = scene
    answer_with(monkeypatch, f"**{REAL} ({LABEL})**: I order a coffee, black.")
    liquid = ai_seats.ai_act(seat_id=johnson.pk, outcome_id=None)
    assert liquid.content == "I order a coffee, black." and liquid.flags == []


@pytest.fixture
def sent(monkeypatch):
    """Every socket message a frame event sends, as (group, event)."""
    messages: list[tuple[str, dict]] = []
    monkeypatch.setattr(
        events, "group_send_on_commit", lambda group, event: messages.append((group, event))
    )
    monkeypatch.setattr(
        events,
        "notify_audiences",
        lambda frame_id, event_type, audiences: messages.extend(audiences.items()),
    )
    return messages


def test_an_ai_intention_giving_away_its_real_name_is_flagged_to_the_gm_alone(
    scene, monkeypatch, sent, user
):
    frame, player, alice, johnson, _ = scene
    answer_with(monkeypatch, f"{PUBLIC}: I lean in. 'My real name is {REAL}, NYPD.'")
    liquid = ai_seats.ai_act(seat_id=johnson.pk, outcome_id=None)

    assert liquid.content.startswith("I lean in.")  # the signature is off, the slip is not
    stored = Liquid.objects.get(pk=liquid.pk)
    assert [(f["kind"], f["owner"]) for f in stored.flags] == [("real_name", PUBLIC)]

    flagged = [(group, event) for group, event in sent if event["type"] == "liquid.flagged"]
    assert [group for group, _ in flagged] == [events.gm_group(frame.pk)]
    assert flagged[0][1] == {
        "type": "liquid.flagged",
        "liquid": str(liquid.pk),
        "flags": stored.flags,
    }
    others = [event for group, event in sent if group != events.gm_group(frame.pk)]
    assert others and all("flags" not in str(event) for event in others)

    gm = FrameAccess(frame=frame, is_gm=True, seat_ids=frozenset())
    player_view = FrameAccess(frame=frame, is_gm=False, seat_ids=frozenset({alice.pk}))
    assert frame_view(gm)["liquid_flags"] == {str(liquid.pk): stored.flags}
    seen = frame_view(player_view)
    assert seen["liquid_flags"] is None
    [player_liquid] = [x for x in seen["liquid"] if x["id"] == str(liquid.pk)]
    # Held for the GM (the frame holds, by default): that the character acts, not its words.
    assert (stored.held, stored.status, player_liquid["held"]) == (True, "submitted", True)
    assert "content" not in player_liquid and REAL not in str(seen)
    assert "real_name" not in str(seen)


def test_in_a_frame_that_only_flags_the_ai_intention_is_read_and_flagged(scene, monkeypatch, sent):
    frame, player, alice, johnson, _ = scene
    Frame.objects.filter(pk=frame.pk).update(leak_guard="flag", liquid_visibility="all")
    answer_with(monkeypatch, f"I lean in. 'My real name is {REAL}, NYPD.'")
    liquid = ai_seats.ai_act(seat_id=johnson.pk, outcome_id=None)
    stored = Liquid.objects.get(pk=liquid.pk)
    assert (stored.held, stored.status) == (False, "committed")
    player_view = FrameAccess(frame=stored.frame, is_gm=False, seat_ids=frozenset({alice.pk}))
    [seen] = [x for x in frame_view(player_view)["liquid"] if x["id"] == str(liquid.pk)]
    assert REAL in seen["content"]  # the GM's choice: shown, and flagged to the GM
    assert [e["type"] for g, e in sent if g == events.gm_group(frame.pk)][-1] == "liquid.flagged"


def test_a_gm_snapshot_without_flagged_intentions_has_none(scene):
    frame, *_ = scene
    gm = FrameAccess(frame=frame, is_gm=True, seat_ids=frozenset())
    assert frame_view(gm)["liquid_flags"] == {}


def test_the_guard_checks_an_intention_against_every_seated_secret(scene):
    frame, *_ = scene
    seats = seats_load(frame=frame)
    public = public_words(seats, frame.production)
    assert intention_flags(content=f"I am {REAL}.", seats=seats, public=public)[0]["kind"] == (
        "real_name"
    )
    assert intention_flags(content=f"I am {PUBLIC}.", seats=seats, public=public) == []
    secret = seats[2].persona.internal_truth  # Tony's, from make_production: one marker word
    found = intention_flags(content=f"I know: {secret}", seats=seats, public=public)
    assert [f["kind"] for f in found] == ["internal_truth"]
