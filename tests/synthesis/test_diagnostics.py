"""The GM's diagnostics (GET /api/frames/{id}/calls, synthesis/diagnostics.py): every LLM
call of the frame — soft, bones, flesh, state, epilogue, an AI seat's action — newest first, a
page at a time, with its pass and character, the real error, and the frame's totals; never
another frame's calls; players 403; a fixed number of queries whatever the number of
calls."""

import json
import time
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from lmix.models import LLMCall, LLMModel
from synthesis import ai_seats, tasks
from synthesis.diagnostics import CALLS_PAGE, frame_calls_query
from synthesis.epilogue import epilogue_run, epilogues_start
from synthesis.liquid import liquid_submit
from synthesis.models import Outcome, Pass
from synthesis.soft import soft_pass_run
from synthesis.state.run import state_pass_run
from tests.conftest import logged_in_client
from tests.synthesis.conftest import Scene, run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_background(monkeypatch):
    """Passes run by hand here, as the workers would."""
    monkeypatch.setattr(tasks.soft_pass_task, "delay", lambda pass_id: None)
    monkeypatch.setattr(tasks.window_fire_task, "apply_async", lambda *a, **k: None)
    monkeypatch.setattr(ai_seats, "_enqueue", lambda seats, outcome_id: None)


def soft(scene: Scene, seat, text: str) -> Pass:
    """A submitted intention's soft pass, run."""
    liquid = liquid_submit(frame=scene.frame, seat=seat, content=text, user=seat.user)
    pass_ = Pass.objects.get(liquid=liquid, kind="soft")
    soft_pass_run(pass_id=pass_.pk)
    return pass_


def calls_of(client, frame, **params):
    answer = client.get(f"/api/frames/{frame.pk}/calls", params)
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_the_gm_sees_every_call_of_the_frame_with_its_pass_and_character(user, settings):
    settings.LMIX_STATE_PASSES = True
    scene = Scene(user)
    soft_pass = soft(scene, scene.alice, "I open the window.")
    medium = run(scene.fire(scene.bob, scene.commit(scene.bob, "I close the door.")))
    assert medium.status == "done"
    outcome = Outcome.objects.get(source_pass=medium)
    assert state_pass_run(outcome_id=outcome.pk).status == "done"
    assert ai_seats.ai_act(seat_id=scene.tony.pk, outcome_id=None) is not None
    other = Scene(user)  # another frame of the same GM: none of its calls
    soft(other, other.alice, "OTHER-FRAME")

    body = calls_of(logged_in_client(user), scene.frame)
    calls = body["calls"]
    assert [c["purpose"] for c in calls] == [
        "synthesis.ai_act",
        "synthesis.state",
        "synthesis.flesh",
        "synthesis.bones",
        "synthesis.soft",
    ]
    assert [c["id"] for c in calls] == sorted((c["id"] for c in calls), reverse=True)
    ai, state, flesh, bones, soft_call = calls
    assert soft_call["pass_id"] == str(soft_pass.pk) and soft_call["pass_kind"] == "soft"
    assert soft_call["seat"] == str(scene.alice.pk)
    assert soft_call["character"] == "Alice Thompson"
    assert soft_call["label"] == "Reading an intention (soft pass)"
    for call in (bones, flesh):
        assert call["pass_id"] == str(medium.pk) and call["pass_kind"] == "medium"
        assert call["character"] == "Bob Wilson"
    assert bones["kind"] == "structured" and flesh["kind"] == "stream"
    # The state pass after Bob's outcome: its outcome, and Bob as its actor.
    assert state["outcome_id"] == str(outcome.pk) and state["pass_id"] is None
    assert state["character"] == "Bob Wilson" and state["seat"] == str(scene.bob.pk)
    assert state["label"] == "Updating the characters' state"
    assert all(c["outcome_id"] is None for c in calls if c is not state)
    assert ai["pass_id"] is None and ai["seat"] == str(scene.tony.pk)
    assert ai["character"] == "Tony Rosetti" and ai["label"] == "AI character acting"
    offline = LLMModel.objects.get(owner=user, provider="offline")
    for call in calls:
        assert call["status"] == "done" and call["error"] == "" and call["finished_at"]
        assert call["model_name"] == offline.name and call["model_id"] == offline.model_id
        assert call["provider"] == "offline" and call["provider_label"] == "Offline narrator"
        assert call["prompt_tokens"] > 0 and call["completion_tokens"] > 0
        assert call["latency_ms"] is not None and call["started_at"]
    assert body["next_before"] is None and body["page_size"] == CALLS_PAGE
    assert body["totals"] == {
        "calls": 5,
        "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
        "completion_tokens": sum(c["completion_tokens"] for c in calls),
        "errors": 0,
        "latency_ms": sum(c["latency_ms"] for c in calls),
        "unfinished": 0,
    }
    # Every call recorded for this frame is listed; the other frame's are its own.
    recorded = LLMCall.objects.exclude(purpose__in=["test", "list_models"])
    assert set(frame_calls_query(scene.frame.pk).values_list("pk", flat=True)) | set(
        frame_calls_query(other.frame.pk).values_list("pk", flat=True)
    ) == set(recorded.values_list("pk", flat=True))
    assert [c["label"] for c in calls_of(logged_in_client(user), other.frame)["calls"]] == [
        "Reading an intention (soft pass)"
    ]


def test_an_epilogue_call_is_the_frames(user):
    scene = Scene(user)
    (first, *_) = epilogues_start(frame=scene.frame)
    epilogue_run(pass_id=first.pk)
    (call,) = calls_of(logged_in_client(user), scene.frame)["calls"]
    assert call["purpose"] == "synthesis.epilogue" and call["pass_kind"] == "epilogue"
    assert call["pass_id"] == str(first.pk) and call["status"] == "done"


def test_the_gm_reads_the_real_error_of_a_failed_call(user):
    scene = Scene(user)
    scene.frame.medium_model = LLMModel.objects.create(
        owner=user,
        name="Closed port",
        provider="openai_compatible",
        api_endpoint="http://127.0.0.1:1/v1",  # nothing listens on port 1
        model_id="served-model",
    )
    scene.frame.save()
    pass_ = run(scene.fire(scene.alice, scene.commit(scene.alice, "I knock.")))
    assert pass_.status == "failed"

    body = calls_of(logged_in_client(user), scene.frame)
    (call,) = body["calls"]
    assert call["status"] == "failed" and call["error"]
    assert call["error"] == LLMCall.objects.get(pk=call["id"]).error
    assert "127.0.0.1:1" in call["error"] or "connect" in call["error"].lower()
    assert call["model_name"] == "Closed port" and call["provider_label"] == "OpenAI-compatible"
    assert body["totals"]["errors"] == 1


def test_an_unfinished_call_is_running_while_its_pass_runs_and_cut_off_after(user):
    scene = Scene(user)
    running = Pass.objects.create(
        frame=scene.frame, seat=scene.alice, kind="soft", trigger="submit", status="running"
    )
    dead = Pass.objects.create(
        frame=scene.frame, seat=scene.bob, kind="soft", trigger="submit", status="done"
    )
    for pass_ in (running, dead):
        LLMCall.objects.create(
            provider="offline",
            model_id="m",
            purpose="synthesis.soft",
            subject=f"pass:{pass_.pk}",
            kind="structured",
        )
    calls = calls_of(logged_in_client(user), scene.frame)["calls"]
    assert {c["pass_id"]: c["status"] for c in calls} == {
        str(running.pk): "running",
        str(dead.pk): "cut_off",
    }
    assert all(c["latency_ms"] is None and c["finished_at"] is None for c in calls)
    assert calls_of(logged_in_client(user), scene.frame)["totals"]["unfinished"] == 2


def test_players_get_403_and_others_404(user, other_user):
    scene = Scene(user)
    soft(scene, scene.alice, "I open the window.")
    url = f"/api/frames/{scene.frame.pk}/calls"
    answer = logged_in_client(scene.alice_player).get(url)
    assert answer.status_code == 403 and "window" not in answer.content.decode()
    assert logged_in_client(other_user).get(url).status_code == 404
    assert logged_in_client(user).get(url, {"before": "x"}).status_code == 400


def many_calls(scene: Scene, count: int) -> list[LLMCall]:
    """`count` finished calls, spread over soft passes of both players, Tony's seat and an
    outcome's state pass."""
    passes = [
        Pass.objects.create(frame=scene.frame, seat=seat, kind="soft", trigger="submit")
        for seat in (scene.alice, scene.bob)
    ]
    outcome = Outcome.objects.create(frame=scene.frame, seq=1, seat=scene.alice)
    subjects = [f"pass:{p.pk}" for p in passes] + [f"seat:{scene.tony.pk}", f"outcome:{outcome.pk}"]
    now = timezone.now()
    return LLMCall.objects.bulk_create(
        LLMCall(
            provider="offline",
            model_id="m",
            purpose="synthesis.soft",
            subject=subjects[i % len(subjects)],
            kind="structured",
            prompt_tokens=10,
            completion_tokens=2,
            latency_ms=5,
            error="boom" if i % 10 == 0 else "",
            finished_at=now + timedelta(seconds=i),
        )
        for i in range(count)
    )


def test_pages_of_a_hundred_newest_first_until_the_last(user):
    scene = Scene(user)
    many_calls(scene, CALLS_PAGE + 30)
    # A call of a pass of no frame, and one whose subject is no row at all: not this frame's.
    for subject in (f"pass:{uuid.uuid4()}", "seat:nonsense", ""):
        LLMCall.objects.create(provider="offline", model_id="m", purpose="x", subject=subject)
    client = logged_in_client(user)
    first = calls_of(client, scene.frame)
    assert len(first["calls"]) == CALLS_PAGE and first["next_before"] == first["calls"][-1]["id"]
    second = calls_of(client, scene.frame, before=first["next_before"])
    assert len(second["calls"]) == 30 and second["next_before"] is None
    ids = [c["id"] for c in first["calls"] + second["calls"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == CALLS_PAGE + 30
    totals = first["totals"]
    assert totals == second["totals"]
    assert totals["calls"] == CALLS_PAGE + 30 and totals["errors"] == 13
    assert {c["outcome_id"] is not None for c in first["calls"]} == {True, False}
    assert totals["prompt_tokens"] == 1300 and totals["completion_tokens"] == 260
    assert totals["latency_ms"] == 650


def count_queries(client, frame, django_assert_max_num_queries, limit: int) -> None:
    with django_assert_max_num_queries(limit):
        calls_of(client, frame)


@pytest.mark.parametrize("count", [1, CALLS_PAGE + 30])
def test_the_queries_are_as_many_for_one_call_as_for_a_full_page(
    user, count, django_assert_max_num_queries
):
    scene = Scene(user)
    many_calls(scene, count)
    client = logged_in_client(user)
    calls_of(client, scene.frame)  # the session and the frame read once, as on every call
    # The user, the frame's access (two), then the page, its passes and outcomes, the
    # seats, the totals.
    count_queries(client, scene.frame, django_assert_max_num_queries, 8)


def test_the_gm_sees_what_runs_and_waits_at_a_one_slot_model_and_nothing_of_other_frames(user):
    """A local server serving one call at a time: its queue, in the order calls will go,
    each by its purpose alone (another frame's calls share the server)."""
    from lmix.llm import slots

    scene = Scene(user)
    endpoint = f"http://127.0.0.1:9/{uuid.uuid4().hex}/v1"
    scene.frame.medium_model = LLMModel.objects.create(
        owner=user,
        name="Local llama",
        provider="openai_compatible",
        api_endpoint=endpoint,
        model_id="llama",
        config={"concurrency": 1},
    )
    scene.frame.save()
    store, now = slots.store(), time.time()
    for n, purpose in enumerate(["synthesis.state", "synthesis.soft", "synthesis.bones"]):
        about = json.dumps({"purpose": purpose, "subject": "pass:SECRET-ID", "since": now - 3})
        ticket = slots.Ticket(endpoint, 1, slots.rank(purpose) * 1e14 + n, f"t{n}", about)
        store.try_take(ticket, now)

    (queue,) = calls_of(logged_in_client(user), scene.frame)["queues"]

    assert (queue["model"], queue["slots"]) == ("Local llama", 1)
    assert [c["label"] for c in queue["running"]] == ["Updating the characters' state"]
    assert [c["label"] for c in queue["waiting"]] == [
        "Resolving what happened (bones)",
        "Reading an intention (soft pass)",
    ]
    assert all(c["seconds"] >= 3 for c in queue["running"] + queue["waiting"])
    assert "SECRET-ID" not in json.dumps(queue)
    for n in range(3):
        store.release(slots.Ticket(endpoint, 1, 0, f"t{n}", ""))


def test_a_model_that_is_not_limited_has_no_queue(user):
    scene = Scene(user)
    assert calls_of(logged_in_client(user), scene.frame)["queues"] == []
