"""AI seats: the assistants of involved characters answer an outcome with liquid of their
own, written with their character's knowledge only; bounded so they never loop; an
all-AI frame moves only when the GM advances it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from lmix.llm.base import LLMError
from synthesis import ai_seats
from synthesis.frame_selectors import seats_load
from synthesis.models import Frame, Liquid, Outcome, Seat
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch):
    """AI actions asked for (run by hand here, as the worker would)."""
    calls: list[tuple[str, str | None]] = []
    monkeypatch.setattr(
        ai_seats,
        "_enqueue",
        lambda seats, outcome_id: calls.extend((seat, outcome_id) for seat in seats),
    )
    return calls


@pytest.fixture(autouse=True)
def no_background(monkeypatch):
    from synthesis import tasks

    monkeypatch.setattr(tasks.soft_pass_task, "delay", lambda pass_id: None)
    monkeypatch.setattr(tasks.window_fire_task, "apply_async", lambda *a, **k: None)


def outcome_naming(
    frame, acting, *, resolved=(), interrupted=(), action="acts", intention=None, witnesses=()
) -> Outcome:
    """An outcome of `acting`'s pass; with `intention`, the committed liquid it resolved."""
    liquid_ids = []
    if intention is not None:
        liquid = Liquid.objects.create(
            frame=frame, seat=acting, author=acting.user, content=intention, status="consumed"
        )
        liquid_ids = [str(liquid.id)]
    return Outcome.objects.create(
        frame=frame,
        seq=frame.seq + 1,
        seat=acting,
        actions_resolved=[
            {"seat": str(s.id), "action": action, "result": "success"} for s in resolved
        ],
        interrupts=[{"seat": str(s.id), "reason": "AIMED-AT-YOU"} for s in interrupted],
        witnesses=[str(s.id) for s in witnesses],
        liquid_ids=liquid_ids,
    )


def react(outcome: Outcome) -> list[str]:
    """`ai_react` as the medium pass calls it, with the frame and seats it gathered."""
    frame = Frame.objects.get(pk=outcome.frame_id)
    return ai_seats.ai_react(outcome=outcome, frame=frame, seats=seats_load(frame=frame))


def test_involved_ai_characters_answer_and_others_do_not(user, enqueued):
    frame = make_frame(user, open_seats=1)  # seat 0 human, seats 1 and 2 AI
    seat_player(frame, 0)
    human, first_ai, second_ai = frame.seats.order_by("position")
    outcome = outcome_naming(frame, human, resolved=[human], interrupted=[first_ai])
    assert react(outcome) == [str(first_ai.id)]
    assert enqueued == [(str(first_ai.id), str(outcome.id))]


def test_an_ai_never_answers_its_own_outcome(user, enqueued):
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    _, first_ai, _ = frame.seats.order_by("position")
    outcome = outcome_naming(frame, first_ai, resolved=[first_ai])
    assert react(outcome) == []


def test_the_assistant_writes_and_commits_with_its_own_knowledge_only(user):
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    human, first_ai, second_ai = frame.seats.order_by("position")
    outcome = outcome_naming(frame, human, resolved=[human], interrupted=[first_ai])
    liquid = ai_seats.ai_act(seat_id=first_ai.id, outcome_id=outcome.id)
    assert liquid.status == "committed" and liquid.author is None and liquid.content
    assert liquid.window is not None
    messages = ai_seats.ai_messages(seat=first_ai, seats=list(frame.seats.all()), outcome=outcome)
    text = "\n".join(m.content for m in messages)
    assert "AIMED-AT-YOU" in text
    own = first_ai.persona.internal_truth
    others = [s.persona.internal_truth for s in (human, second_ai)]
    assert own in text and not any(secret in text for secret in others)
    # Nothing pending for it now: a second call does not act twice.
    assert ai_seats.ai_act(seat_id=first_ai.id, outcome_id=outcome.id) is None


def test_ai_actions_are_bounded_per_human_action(user, enqueued, settings):
    settings.LMIX_AI_ACTIONS_PER_HUMAN_ACTION = 1
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    human, first_ai, second_ai = frame.seats.order_by("position")
    outcome = outcome_naming(frame, human, interrupted=[first_ai, second_ai])
    assert len(react(outcome)) == 1  # one of two, within the budget
    Liquid.objects.create(frame=frame, seat=first_ai, content="AI acted", status="consumed")
    assert react(outcome) == []  # spent until a human acts again


def test_ai_actions_are_bounded_per_minute_too(user, enqueued, settings):
    settings.LMIX_AI_ACTIONS_PER_HUMAN_ACTION, settings.LMIX_AI_ACTIONS_PER_MINUTE = 10, 1
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    human, first_ai, second_ai = frame.seats.order_by("position")
    outcome = outcome_naming(frame, human, interrupted=[first_ai, second_ai])
    assert len(react(outcome)) == 1
    Liquid.objects.create(frame=frame, seat=first_ai, content="AI acted", status="consumed")
    assert react(outcome) == []  # within the minute
    Liquid.objects.filter(frame=frame, author__isnull=True).update(
        submitted_at=timezone.now() - timedelta(minutes=2)
    )
    assert len(react(outcome)) == 1  # a minute on


def test_reactions_let_through_together_spend_the_budget_once_when_they_write(
    user, enqueued, settings
):
    # Two outcomes stored close together each counted the budget before either AI wrote.
    settings.LMIX_AI_ACTIONS_PER_HUMAN_ACTION = 1
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    human, first_ai, second_ai = frame.seats.order_by("position")
    first = outcome_naming(frame, human, interrupted=[first_ai])
    frame.seq += 1  # the next outcome's number
    second = outcome_naming(frame, human, interrupted=[second_ai])
    assert len(react(first)) == 1 and len(react(second)) == 1
    assert ai_seats.ai_act(seat_id=first_ai.id, outcome_id=first.id) is not None
    assert ai_seats.ai_act(seat_id=second_ai.id, outcome_id=second.id) is None
    assert not Liquid.objects.filter(seat=second_ai).exists()
    # The GM's advance is not a reaction: it moves every idle AI seat whatever the budget.
    assert ai_seats.ai_act(seat_id=second_ai.id, outcome_id=None) is not None


def test_a_seat_asked_twice_before_it_wrote_acts_once(user, enqueued, monkeypatch):
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    human, first_ai, _ = frame.seats.order_by("position")
    outcome = outcome_naming(frame, human, interrupted=[first_ai])
    complete = ai_seats.llm_complete

    def meanwhile(**kwargs):  # the other task writes while this one waits for the model
        answer = complete(**kwargs)
        monkeypatch.setattr(ai_seats, "llm_complete", complete)
        assert ai_seats.ai_act(seat_id=first_ai.id, outcome_id=outcome.id) is not None
        return answer

    monkeypatch.setattr(ai_seats, "llm_complete", meanwhile)
    assert ai_seats.ai_act(seat_id=first_ai.id, outcome_id=outcome.id) is None
    assert Liquid.objects.filter(seat=first_ai).count() == 1


def test_an_all_ai_frame_moves_only_when_the_gm_advances(api, user, enqueued):
    frame = make_frame(user, open_seats=0)
    seats = list(frame.seats.order_by("position"))
    outcome = outcome_naming(frame, seats[0], interrupted=seats[1:])
    assert react(outcome) == [] and enqueued == []
    response = api.post(f"/api/frames/{frame.id}/advance")
    assert response.status_code == 202
    assert sorted(response.json()["acting_seats"]) == sorted(str(s.id) for s in seats)


def test_an_assistant_that_answers_only_invisible_characters_does_not_act(
    user, enqueued, monkeypatch
):
    from lmix.llm.base import Completion, Usage

    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    human, ai_seat, _ = frame.seats.order_by("position")
    outcome = outcome_naming(frame, human, interrupted=[ai_seat])
    answer = Completion("\u200b\u2060 \ufeff", Usage())
    monkeypatch.setattr(ai_seats, "llm_complete", lambda **kwargs: answer)
    assert ai_seats.ai_act(seat_id=ai_seat.id, outcome_id=outcome.id) is None  # no 400
    assert not Liquid.objects.filter(seat=ai_seat).exists()


def test_a_name_addresses_by_whole_words_never_by_a_title_alone():
    assert ai_seats.name_forms("Tony Rosetti") == ["Tony Rosetti", "Rosetti", "Tony"]
    assert ai_seats.name_forms("Doctor Reyes") == ["Doctor Reyes", "Reyes"]
    assert ai_seats.name_forms("Al") == ["Al"]
    tony = ai_seats.name_forms("Tony Rosetti")
    assert ai_seats.names_in("ask tony whether he has been here before", tony)
    assert ai_seats.names_in("I look at Rosetti.", tony)
    assert ai_seats.names_in("«Tony?»", tony)
    assert not ai_seats.names_in("Tonya waves", tony)
    assert not ai_seats.names_in("a stony silence", tony)
    assert not ai_seats.names_in("ask the doctor", ai_seats.name_forms("Doctor Reyes"))


def test_an_intention_addressing_tony_by_name_makes_his_seat_act(user, enqueued):
    frame = make_frame(user, open_seats=1)  # Alice human; Bob and Tony AI
    seat_player(frame, 0)
    alice, bob, tony = frame.seats.order_by("position")
    outcome = outcome_naming(
        frame,
        alice,
        resolved=[alice],
        action="asks a question",
        intention="I ask Tony, quietly, whether he has been here before.",
    )
    assert react(outcome) == [str(tony.id)]
    assert enqueued == [(str(tony.id), str(outcome.id))]


def test_a_name_in_the_outcome_itself_concerns_the_seat_too(user, enqueued):
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    alice, bob, tony = frame.seats.order_by("position")
    outcome = outcome_naming(frame, alice, resolved=[alice], action="hands BOB WILSON a cup")
    assert react(outcome) == [str(bob.id)]
    Outcome.objects.filter(pk=outcome.pk).update(
        actions_resolved=[], world_facts=["The lamp above Tony flickers."]
    )
    assert react(Outcome.objects.get(pk=outcome.pk)) == [str(tony.id)]


def test_an_outcome_naming_nobody_concerns_no_one_it_only_witnessed(user, enqueued):
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    alice, bob, tony = frame.seats.order_by("position")
    outcome = outcome_naming(
        frame, alice, resolved=[alice], intention="I sit down.", witnesses=[alice, bob, tony]
    )
    assert react(outcome) == []  # both AI seats react only when addressed (the default)
    bob.ai_reacts = "always"
    bob.save()
    assert react(outcome) == [str(bob.id)]  # Bob saw it, and reacts to anything he sees
    Outcome.objects.filter(pk=outcome.pk).update(witnesses=[str(alice.id)])
    assert react(Outcome.objects.get(pk=outcome.pk)) == []  # not before his eyes


def test_a_seat_left_to_the_gm_never_reacts(user, enqueued):
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    alice, bob, tony = frame.seats.order_by("position")
    Seat.objects.filter(pk__in=[bob.pk, tony.pk]).update(ai_reacts="gm")
    outcome = outcome_naming(
        frame,
        alice,
        resolved=[alice, tony],
        interrupted=[tony],
        intention="I ask Tony and Bob where they were.",
        witnesses=[alice, bob, tony],
    )
    assert react(outcome) == [] and enqueued == []
    # The GM's word still moves them.
    assert sorted(ai_seats.frame_advance(frame=frame)) == sorted([str(bob.id), str(tony.id)])


def test_a_seat_never_answers_its_own_intention_naming_itself(user, enqueued):
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    alice, bob, tony = frame.seats.order_by("position")
    tony.ai_reacts = "always"
    tony.save()
    outcome = outcome_naming(
        frame,
        tony,
        resolved=[tony],
        action="Tony Rosetti shrugs",
        intention="Tony shrugs.",
        witnesses=[alice, bob, tony],
    )
    assert react(outcome) == []


def test_ai_seats_naming_each_other_stay_within_the_budget(user, enqueued, settings):
    settings.LMIX_AI_ACTIONS_PER_HUMAN_ACTION = 1
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    alice, bob, tony = frame.seats.order_by("position")
    first = outcome_naming(frame, alice, resolved=[alice], intention="I ask Tony and Bob.")
    assert len(react(first)) == 1  # both addressed, one of them within the budget
    # Tony answers, naming Bob, whose answer would name Tony again: the budget says no.
    Liquid.objects.create(frame=frame, seat=tony, content="I ask Bob.", status="consumed")
    frame.seq += 1
    second = outcome_naming(frame, tony, resolved=[tony], action="asks Bob")
    assert react(second) == [] and len(enqueued) == 1


def test_the_seat_shows_thinking_while_its_assistant_writes_even_when_it_fails(user, monkeypatch):
    frame = make_frame(user, open_seats=1)
    seat_player(frame, 0)
    alice, _, tony = frame.seats.order_by("position")
    outcome = outcome_naming(frame, alice, interrupted=[tony])
    said: list[tuple[str, bool]] = []
    monkeypatch.setattr(
        ai_seats, "notify_presence", lambda frame_id, seat, typing: said.append((seat, typing))
    )
    complete = ai_seats.llm_complete

    def watched(**kwargs):
        assert said == [(tony.pk, True)]  # thinking before the model is asked
        return complete(**kwargs)

    monkeypatch.setattr(ai_seats, "llm_complete", watched)
    assert ai_seats.ai_act(seat_id=tony.id, outcome_id=outcome.id) is not None
    assert said == [(tony.pk, True), (tony.pk, False)]

    def failing(**kwargs):
        raise LLMError("down")

    said.clear()
    Liquid.objects.filter(seat=tony).update(status="consumed")
    monkeypatch.setattr(ai_seats, "llm_complete", failing)
    assert ai_seats.ai_act(seat_id=tony.id, outcome_id=None) is None
    assert said == [(tony.pk, True), (tony.pk, False)]
    # A seat that may not act (something of it pending) never shows thinking.
    said.clear()
    Liquid.objects.create(frame=frame, seat=tony, content="waiting", status="committed")
    assert ai_seats.ai_act(seat_id=tony.id, outcome_id=None) is None and said == []


def test_an_ai_seats_prompt_holds_its_own_state_and_never_anothers(user):
    """The assistant reads its character's own memories, relationships and mood (recalled
    for what just happened), never another seat's: markers."""
    from synthesis.state.services import delta_record, memory_record
    from synthesis.state_models import DeltaKind

    frame = make_frame(user, open_seats=1)
    human, first_ai, second_ai = frame.seats.order_by("position")
    event = outcome_naming(
        frame, human, resolved=[human], action="finds the lantern", witnesses=[first_ai, second_ai]
    )
    memory_record(seat=first_ai, outcome=event, text="OWN-MEMORY-MARKER the lantern glowed")
    memory_record(seat=second_ai, outcome=event, text="OTHER-MEMORY-MARKER the lantern glowed")
    delta_record(seat=first_ai, kind=DeltaKind.EDGE, target=human, affinity=20, text="OWN-EDGE")
    delta_record(seat=second_ai, kind=DeltaKind.EDGE, target=human, text="OTHER-EDGE-MARKER")
    delta_record(seat=first_ai, kind=DeltaKind.MOOD, mood="suspicious", intensity=0.2)
    delta_record(seat=second_ai, kind=DeltaKind.FACT, text="OTHER-FACT-MARKER")
    seats = list(frame.seats.all())
    text = "\n".join(
        m.content for m in ai_seats.ai_messages(seat=first_ai, seats=seats, outcome=None)
    )
    assert "OWN-MEMORY-MARKER" in text and "OWN-EDGE" in text and "suspicious" in text
    assert "YOUR MEMORIES" in text and "YOUR RELATIONSHIPS" in text
    assert "OTHER-" not in text
    # and the one without state has none of those sections
    third = "\n".join(
        m.content for m in ai_seats.ai_messages(seat=human, seats=seats, outcome=None)
    )
    assert "MEMORY-MARKER" not in third and "YOUR MEMORIES" not in third
