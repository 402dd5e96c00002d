"""A frame's model budget (synthesis/budget.py): every model call the frame makes counts;
AI seats and interrupt-woken passes stop below the players' share; interrupts for one seat
wake one pass; a player's work over budget waits and runs once the minute frees; the GM,
and only the GM, sees the counts."""

import logging
import uuid

import pytest
from django.db import transaction

from config.celery import app
from lmix.llm import meter
from lmix.llm.base import Message
from lmix.llm.client import llm_complete
from lmix.models import LLMCall, LLMModel
from synthesis import ai_seats, windows
from synthesis.budget import Work, budget_admits, frame_budget, frame_key
from synthesis.liquid import liquid_commit, liquid_submit
from synthesis.medium.context import gather
from synthesis.models import Liquid, Outcome, Pass, Window
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db

NOON = 1_800_000_000.0  # a minute's start: the meter's clock stands still here


@pytest.fixture
def clock(monkeypatch):
    """The meter's clock, stopped at NOON; `clock.now` moves it."""

    class Clock:
        now = NOON

    stopped = Clock()
    monkeypatch.setattr(meter, "clock", lambda: stopped.now)
    return stopped


@pytest.fixture
def worker(monkeypatch, django_capture_on_commit_callbacks):
    """Background work runs at once, in this thread, after each commit (Celery eager, the
    on-commit callbacks executed, those they add too): `worker()` is the block."""
    monkeypatch.setitem(app.conf, "task_always_eager", True)
    return lambda: django_capture_on_commit_callbacks(execute=True)


def scene(gm, **options):
    """Alice played by a person (seat 0); Bob and Tony by their assistants."""
    frame = make_frame(gm, open_seats=1, **options)
    player, client = seat_player(frame, 0)
    alice, bob, tony = frame.seats.order_by("position")
    return frame, player, client, alice, bob, tony


def commit_shove(frame, player, alice, tony, number: int) -> Liquid:
    """Alice commits an interruptive action aimed at Tony (its analysis given, as the soft
    pass would store it)."""
    liquid = liquid_submit(frame=frame, seat=alice, content=f"I shove Tony, {number}.", user=player)
    Liquid.objects.filter(pk=liquid.pk).update(pscale=-2, interruptive=True, targets=[str(tony.pk)])
    liquid.refresh_from_db()
    return liquid_commit(liquid=liquid, user=player)


def calls_of(frame, *, ai_seats_: list) -> dict[str, int]:
    """The frame's recorded model calls: the players' work and the AI/interrupt work
    (AI seats' actions, every pass of an AI seat, every interrupt-woken pass)."""
    passes = {str(p.pk): p for p in Pass.objects.filter(frame=frame)}
    ai = {str(s.pk) for s in ai_seats_}
    counts = {"human": 0, "background": 0}
    for subject in LLMCall.objects.values_list("subject", flat=True):
        kind, _, key = subject.partition(":")
        if kind == "seat" and key in ai:
            counts["background"] += 1
        elif kind == "pass" and key in passes:
            pass_ = passes[key]
            background = str(pass_.seat_id) in ai or pass_.trigger == "interrupt"
            counts["background" if background else "human"] += 1
    return counts


def test_commits_naming_an_ai_character_wake_at_most_the_budgets_worth_of_ai_calls(
    user, settings, clock, worker
):
    # The 300 commits of issue 24, scaled down: a player shoves an AI character 30 times
    # in a minute. Each outcome interrupts Tony and asks him to react.
    settings.LMIX_FRAME_MODEL_CALLS_PER_MINUTE = 200
    settings.LMIX_FRAME_BACKGROUND_SHARE = 0.1  # AI and interrupts: below 20 calls
    settings.LMIX_AI_ACTIONS_PER_HUMAN_ACTION = 100  # only the frame's budget bounds them
    settings.LMIX_AI_ACTIONS_PER_MINUTE = 100
    settings.LMIX_LIQUID_RATE_PER_SEAT = settings.LMIX_LIQUID_RATE_PER_USER = "1000/min"
    frame, player, _, alice, bob, tony = scene(user, tempo=0)  # every commit fires at once
    for number in range(30):
        with worker():
            commit_shove(frame, player, alice, tony, number)

    # Every one of the player's actions was resolved, none waits.
    assert Outcome.objects.filter(frame=frame, seat=alice).count() == 30
    counts = calls_of(frame, ai_seats_=[bob, tony])
    # AI and interrupt work stopped at its share, give or take the one piece of work
    # admitted last (an AI action: its call, its soft pass, bones, flesh).
    assert 0 < counts["background"] <= 20 + 4
    assert counts["human"] >= 60  # bones and flesh of each commit
    budget = frame_budget(frame_id=frame.pk)
    assert budget.calls == sum(counts.values())  # every call counted, once
    assert not budget.admits(Work.AI) and budget.admits(Work.HUMAN)


def test_every_model_call_of_a_frame_counts_its_calls_and_tokens(user, clock):
    frame, _, _, alice, _, tony = scene(user)
    model = LLMModel.objects.get(owner=user, provider="offline")
    pass_ = Pass.objects.create(frame=frame, seat=alice, kind="medium", trigger="expiry")
    ask = [Message("user", "Say something.")]
    llm_complete(model=model, messages=ask, purpose="test", subject=f"pass:{pass_.pk}")
    llm_complete(model=model, messages=ask, purpose="test", subject=f"seat:{tony.pk}")
    llm_complete(model=model, messages=ask, purpose="test", subject=f"turn:{uuid.uuid4()}")
    used = frame_budget(frame_id=frame.pk)
    assert used.calls == 2  # the pass's and the AI seat's; a production turn is no frame's
    rows = LLMCall.objects.filter(subject__in=[f"pass:{pass_.pk}", f"seat:{tony.pk}"])
    assert used.tokens == sum(r.prompt_tokens + r.completion_tokens for r in rows) > 0
    # The minute rolls: half a minute on, half of the last minute's use still counts.
    clock.now += 90
    assert frame_budget(frame_id=frame.pk).calls == 1
    clock.now += 30
    assert frame_budget(frame_id=frame.pk).calls == 0


def test_two_interrupts_for_one_seat_wake_one_pass_that_knows_both(user, clock):
    frame, _, _, alice, bob, tony = scene(user)
    first = Outcome.objects.create(frame=frame, seq=1, seat=alice)
    second = Outcome.objects.create(frame=frame, seq=2, seat=alice)
    with transaction.atomic():
        woken = windows.window_interrupt(
            frame=frame, seat_id=bob.pk, outcome=first, reason="Alice shoves him."
        )
        again = windows.window_interrupt(
            frame=frame, seat_id=bob.pk, outcome=second, reason="Alice trips him."
        )
    assert again.pk == woken.pk
    passes = Pass.objects.filter(seat=bob, kind="medium")
    assert passes.count() == 1
    merged = passes.get()
    assert merged.interrupt["outcome"] == str(second.pk)
    assert merged.interrupt["outcomes"] == [str(first.pk), str(second.pk)]
    # The pass reads both reasons, and the latest outcome, when it gathers its context.
    ctx = gather(merged)
    assert "Alice shoves him." in ctx.interrupt_reason
    assert "Alice trips him." in ctx.interrupt_reason
    assert ctx.interrupt_outcome == second
    # Once it runs, the next interrupt gets one new pass (a running pass read its
    # context already), and the one after merges into that.
    Pass.objects.filter(pk=merged.pk).update(status="running")
    third = Outcome.objects.create(frame=frame, seq=3, seat=alice)
    fourth = Outcome.objects.create(frame=frame, seq=4, seat=alice)
    with transaction.atomic():
        windows.window_interrupt(frame=frame, seat_id=bob.pk, outcome=third, reason="3")
        windows.window_interrupt(frame=frame, seat_id=bob.pk, outcome=fourth, reason="4")
    assert passes.count() == 2


def test_an_interrupt_over_budget_waits_and_wakes_one_pass_with_every_reason(
    user, settings, clock, caplog
):
    settings.LMIX_FRAME_MODEL_CALLS_PER_MINUTE = 10
    frame, _, _, alice, bob, _ = scene(user)
    meter.meter_add(frame_key(frame.pk), calls=5)  # half spent: interrupts wait
    first, second = (
        Outcome.objects.create(
            frame=frame, seq=seq, seat=alice, interrupts=[{"seat": str(bob.pk), "reason": why}]
        )
        for seq, why in ((1, "Alice shoves him."), (2, "Alice trips him."))
    )
    with caplog.at_level(logging.WARNING, logger="synthesis.budget"), transaction.atomic():
        for outcome, reason in ((first, "Alice shoves him."), (second, "Alice trips him.")):
            assert (
                windows.window_interrupt(
                    frame=frame, seat_id=bob.pk, outcome=outcome, reason=reason
                )
                is None
            )
    assert not Pass.objects.filter(seat=bob).exists()
    waiting = Window.objects.get(seat=bob, status="open")
    assert waiting.trigger == "interrupt"
    refused = [r for r in caplog.records if r.getMessage().startswith(f"frame {frame.pk}")]
    assert refused and refused[0].kind == "interrupt" and refused[0].calls == 5
    assert windows.windows_sweep() == 0  # the minute has not freed
    clock.now += 120
    assert windows.windows_sweep() == 1
    woken = Pass.objects.get(seat=bob)
    assert woken.trigger == "interrupt" and woken.window_id == waiting.pk
    assert woken.interrupt["outcomes"] == [str(first.pk), str(second.pk)]
    assert "Alice shoves him." in woken.interrupt["reason"]
    assert "Alice trips him." in woken.interrupt["reason"]


def test_a_players_commit_over_budget_waits_and_runs_once_the_minute_frees(
    user, settings, clock, worker
):
    settings.LMIX_FRAME_MODEL_CALLS_PER_MINUTE = 4
    frame, player, _, alice, _, _ = scene(user, tempo=0)
    meter.meter_add(frame_key(frame.pk), calls=4)
    liquid = liquid_submit(frame=frame, seat=alice, content="I open the door.", user=player)
    with worker():
        liquid_commit(liquid=liquid, user=player)
    # Not lost: committed, in a window due now, which the sweep does not fire yet.
    liquid.refresh_from_db()
    assert liquid.status == "committed" and liquid.window.status == "open"
    assert not Pass.objects.filter(seat=alice, kind="medium").exists()
    with worker():
        assert windows.windows_sweep() == 0
    clock.now += 120
    with worker():
        assert windows.windows_sweep() == 1
    liquid.refresh_from_db()
    assert liquid.status == "consumed"  # resolved and narrated, once
    assert Outcome.objects.filter(frame=frame, seat=alice).count() == 1


def test_an_ai_seat_does_not_act_over_the_budget(user, settings, clock, api):
    settings.LMIX_FRAME_MODEL_CALLS_PER_MINUTE = 10
    frame, _, _, alice, _, tony = scene(user)
    outcome = Outcome.objects.create(
        frame=frame, seq=1, seat=alice, interrupts=[{"seat": str(tony.pk), "reason": "Hey."}]
    )
    meter.meter_add(frame_key(frame.pk), calls=5)
    seats = list(frame.seats.all())
    assert ai_seats.ai_react(outcome=outcome, frame=frame, seats=seats) == []
    assert ai_seats.ai_act(seat_id=tony.pk, outcome_id=outcome.pk) is None
    assert not LLMCall.objects.filter(subject=f"seat:{tony.pk}").exists()
    response = api.post(f"/api/frames/{frame.id}/advance")
    assert response.status_code == 429 and "budget" in response.json()["detail"]
    # The players' share is left: their work is still admitted.
    assert budget_admits(frame_id=frame.pk, kind=Work.HUMAN, what="test")


def test_the_gm_sees_the_frames_budget_and_a_player_does_not(user, settings, clock, api):
    settings.LMIX_FRAME_MODEL_CALLS_PER_MINUTE = 10
    settings.LMIX_FRAME_MODEL_TOKENS_PER_MINUTE = 5000
    frame, _, player, *_ = scene(user)
    meter.meter_add(frame_key(frame.pk), calls=6, tokens=1200)
    shown = api.get(f"/api/frames/{frame.id}/budget").json()
    assert shown["calls"] == 6 and shown["calls_limit"] == 10
    assert shown["tokens"] == 1200 and shown["tokens_limit"] == 5000
    assert shown["ai_paused"] is True and shown["players_paused"] is False
    assert api.get(f"/api/frames/{frame.id}").json()["budget"]["calls"] == 6
    assert player.get(f"/api/frames/{frame.id}/budget").status_code == 403
    assert "budget" not in player.get(f"/api/frames/{frame.id}").json()
