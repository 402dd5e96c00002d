"""Timer windows: a commit opens one (window × tempo), a second commit gathers into it, it
fires exactly once when due (task or sweep, duplicate or late), pause freezes it and
resume gives its time back, an interrupt cancels it and wakes the character now."""

from datetime import timedelta

import pytest
from django.utils import timezone

from synthesis import frame_events, windows
from synthesis.liquid import frame_status_set, liquid_commit, liquid_submit
from synthesis.models import Frame, Liquid, Outcome, Pass, Window
from synthesis.selectors import pass_list, window_body
from tests.synthesis.conftest import make_frame, seat_player

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_tasks(monkeypatch):
    """Nothing runs in the background here: the tests fire windows themselves."""
    from synthesis import tasks

    started: list[str] = []
    monkeypatch.setattr(tasks.medium_pass_task, "delay", lambda pass_id: started.append(pass_id))
    monkeypatch.setattr(tasks.window_fire_task, "apply_async", lambda *a, **k: None)
    monkeypatch.setattr(tasks.soft_pass_task, "delay", lambda pass_id: None)
    return started


@pytest.fixture
def events(monkeypatch):
    """Frame-wide events as they are handed over for sending after commit, in order."""
    published = []
    monkeypatch.setattr(
        frame_events, "group_send_on_commit", lambda _group, event: published.append(event)
    )
    return published


def frame_event(events: list[dict], kind: str) -> dict:
    return next(event for event in events if event["type"] == kind)


def committed(frame, player, position=0, content="I search the desk.", pscale=-1) -> Liquid:
    seat = frame.seats.get(position=position)
    liquid = liquid_submit(frame=frame, seat=seat, content=content, user=player)
    Liquid.objects.filter(pk=liquid.pk).update(pscale=pscale, window_seconds=None)
    liquid.refresh_from_db()
    return liquid_commit(liquid=liquid, user=player)


def expire(window: Window) -> None:
    Window.objects.filter(pk=window.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_a_commit_opens_a_window_as_long_as_its_pscale_times_the_tempo(user):
    frame = make_frame(user, tempo=2)
    alice, _ = seat_player(frame, 0)
    liquid = committed(frame, alice, pscale=-2)
    window = liquid.window
    seconds = (window.expires_at - liquid.committed_at).total_seconds()
    assert window.status == "open" and seconds == pytest.approx(7.5 * 2, abs=1)
    second = committed(frame, alice, content="And the drawer.")
    assert second.window_id == window.id  # gathered, not a second window
    assert Window.objects.count() == 1


def test_a_window_fires_once_when_due_however_many_tasks_arrive(
    user, no_tasks, django_capture_on_commit_callbacks
):
    frame = make_frame(user)
    alice, _ = seat_player(frame, 0)
    window = committed(frame, alice).window
    assert windows.window_fire(window_id=window.id) is None  # not due yet: a task too early
    expire(window)
    with django_capture_on_commit_callbacks(execute=True):
        first = windows.window_fire(window_id=window.id)
    assert first is not None and first.kind == "medium" and first.trigger == "expiry"
    assert windows.window_fire(window_id=window.id) is None  # a duplicate
    assert windows.windows_sweep() == 0  # the backstop finds nothing left
    assert Window.objects.get(pk=window.id).status == "firing"
    assert Pass.objects.filter(kind="medium").count() == 1 and no_tasks == [str(first.id)]


def test_the_sweep_fires_a_window_whose_task_was_lost(user):
    frame = make_frame(user)
    alice, _ = seat_player(frame, 0)
    window = committed(frame, alice).window
    assert windows.windows_sweep() == 0
    expire(window)
    assert windows.windows_sweep() == 1
    assert Window.objects.get(pk=window.id).status == "firing"


def test_tempo_zero_and_shared_mode_fire_at_commit(
    user, no_tasks, events, django_capture_on_commit_callbacks
):
    for options in ({"tempo": 0}, {"mode": "shared"}):
        frame = make_frame(user, **options)
        alice, _ = seat_player(frame, 0)
        with django_capture_on_commit_callbacks(execute=True):
            window = committed(frame, alice).window
        assert window.status == "firing" and window.trigger == "commit"
        pass_ = Pass.objects.get(window=window, kind="medium")
        assert pass_.trigger == "commit" and no_tasks[-1] == str(pass_.pk)  # enqueued now
        assert windows.window_fire(window_id=window.id) is None  # nothing left to fire
        fired = [e for e in events if e["type"] == "window.fired"]
        assert fired[-1]["window"]["id"] == str(window.pk)  # clients learn of it at once


def test_pause_freezes_windows_and_resume_gives_their_time_back(user, events):
    frame = make_frame(user)
    alice, _ = seat_player(frame, 0)
    window = committed(frame, alice, pscale=0).window  # 90 s
    frame_status_set(frame=frame, status="paused")
    frozen = Window.objects.get(pk=window.id)
    assert frozen.expires_at is None and 80 < frozen.remaining_seconds <= 90
    assert frame_event(events, "frame.paused")["windows"] == [window_body(frozen)]
    expire(frozen)  # even a task arriving with a stale due time
    Window.objects.filter(pk=window.id).update(expires_at=None)
    assert windows.windows_sweep() == 0 and windows.window_fire(window_id=window.id) is None
    Window.objects.filter(pk=window.id).update(remaining_seconds=30)
    frame_status_set(frame=Frame.objects.get(pk=frame.pk), status="open")
    resumed = Window.objects.get(pk=window.id)
    left = (resumed.expires_at - timezone.now()).total_seconds()
    assert resumed.remaining_seconds is None and 25 < left <= 30
    assert frame_event(events, "frame.resumed")["windows"] == [window_body(resumed)]


def test_a_commit_in_a_paused_frame_waits_and_a_closed_frame_takes_nothing(user):
    frame = make_frame(user)
    alice, alice_client = seat_player(frame, 0)
    frame_status_set(frame=frame, status="paused")
    frame.refresh_from_db()
    window = committed(frame, alice).window
    assert window.expires_at is None and window.remaining_seconds > 0
    frame_status_set(frame=frame, status="closed")
    response = alice_client.post(
        f"/api/frames/{frame.id}/liquid",
        {"seat": str(window.seat_id), "content": "Too late."},
        format="json",
    )
    assert response.status_code == 409 and "closed" in response.json()["detail"]


def test_an_interrupt_cancels_the_open_window_and_wakes_the_character_now(
    user, no_tasks, events, django_capture_on_commit_callbacks
):
    frame = make_frame(user)
    alice, _ = seat_player(frame, 0)
    bob, _ = seat_player(frame, 1)
    waiting = committed(frame, bob, position=1, pscale=0)
    seats = list(frame.seats.order_by("position"))
    outcome = Outcome.objects.create(frame=frame, seq=1, seat=seats[0])
    with django_capture_on_commit_callbacks(execute=True):
        woken = windows.window_interrupt(
            frame=frame, seat_id=seats[1].id, outcome=outcome, reason="Alice shoves him."
        )
    assert Window.objects.get(pk=waiting.window_id).status == "cancelled"
    assert woken.trigger == "interrupt" and woken.interrupt["reason"] == "Alice shoves him."
    assert woken.window.status == "firing"
    assert Liquid.objects.get(pk=waiting.pk).window_id == woken.window_id  # taken along
    assert no_tasks == [str(woken.id)]
    cancelled = frame_event(events, "window.cancelled")
    assert cancelled["window"]["id"] == str(waiting.window_id)
    assert cancelled["cause"] == {
        "kind": "interrupt",
        "outcome": str(outcome.pk),
        "reason": "Alice shoves him.",
    }
    # The GM's list of passes says what interrupted the woken one, and of no other pass.
    interrupts = {p["id"]: p["interrupt"] for p in pass_list(frame=frame)}
    assert interrupts.pop(str(woken.id)) == {
        "outcome": str(outcome.pk),
        "reason": "Alice shoves him.",
    }
    assert interrupts and set(interrupts.values()) == {None}  # the intentions' soft passes


def test_the_gm_pauses_resumes_and_closes_over_rest(api, user):
    frame = make_frame(user)
    _, player = seat_player(frame, 0)
    assert player.post(f"/api/frames/{frame.id}/pause").status_code == 403
    assert api.post(f"/api/frames/{frame.id}/pause").json()["status"] == "paused"
    assert api.post(f"/api/frames/{frame.id}/pause").status_code == 409
    assert api.post(f"/api/frames/{frame.id}/resume").json()["status"] == "open"
    closed = api.post(f"/api/frames/{frame.id}/close").json()
    assert closed["status"] == "closed" and closed["seq"] == 5  # join, its notice, three controls


def test_the_window_task_runs_its_pass_itself_one_hop_less(
    user, no_tasks, monkeypatch, django_capture_on_commit_callbacks
):
    from synthesis import tasks

    ran: list[str] = []
    monkeypatch.setattr(tasks, "medium_pass_run", lambda *, pass_id: ran.append(str(pass_id)))
    frame = make_frame(user)
    alice, _ = seat_player(frame, 0)
    window = committed(frame, alice).window
    expire(window)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.window_fire_task(str(window.id))
    (pass_,) = Pass.objects.filter(window=window)
    assert ran == [str(pass_.id)] and no_tasks == []  # run here, not enqueued again


def test_the_gm_fires_a_window_now_or_cancels_it_giving_the_intention_back(
    api, user, no_tasks, events
):
    frame = make_frame(user)
    alice, alice_api = seat_player(frame, 0)
    first = committed(frame, alice, pscale=0).window
    fired = api.post(f"/api/windows/{first.id}/fire")
    assert fired.status_code == 202 and fired.json()["window"]["status"] == "firing"
    assert Pass.objects.filter(window=first, kind="medium").count() == 1
    again = api.post(f"/api/windows/{first.id}/fire")
    assert again.status_code == 409 and "no longer open" in again.json()["detail"]

    Window.objects.filter(pk=first.id).update(status="fired")
    liquid = committed(frame, alice, pscale=0, content="I wait by the door.")
    second = liquid.window
    assert alice_api.post(f"/api/windows/{second.id}/cancel").status_code == 403  # GM only
    cancelled = api.post(f"/api/windows/{second.id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["window"]["status"] == "cancelled"
    liquid.refresh_from_db()
    assert liquid.status == "submitted" and liquid.window is None and liquid.committed_at is None
    assert liquid.content == "I wait by the door."  # nothing written is lost
    assert [e["type"] for e in events][-2:] == ["window.cancelled", "liquid.updated"]
    assert events[-2]["cause"] == {"kind": "gm"}  # not an interrupt: nothing to react to
    recommitted = alice_api.post(f"/api/liquid/{liquid.id}/commit")
    assert recommitted.status_code == 200  # the player commits it anew

    frame_status_set(frame=Frame.objects.get(pk=frame.pk), status="paused")
    paused = Liquid.objects.get(pk=liquid.id).window
    refused = api.post(f"/api/windows/{paused.id}/fire")
    assert refused.status_code == 409 and "Resume" in refused.json()["detail"]
