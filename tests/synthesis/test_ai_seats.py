"""AI seats: the assistants of involved characters answer an outcome with liquid of their
own, written with their character's knowledge only; bounded so they never loop; an
all-AI frame moves only when the GM advances it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from synthesis import ai_seats
from synthesis.frame_selectors import seats_load
from synthesis.models import Frame, Liquid, Outcome
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


def outcome_naming(frame, acting, *, resolved=(), interrupted=()) -> Outcome:
    return Outcome.objects.create(
        frame=frame,
        seq=frame.seq + 1,
        seat=acting,
        actions_resolved=[
            {"seat": str(s.id), "action": "acts", "result": "success"} for s in resolved
        ],
        interrupts=[{"seat": str(s.id), "reason": "AIMED-AT-YOU"} for s in interrupted],
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
