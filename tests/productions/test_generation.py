"""Turn generation against a provider that fails or is stopped mid-stream."""

import time

import pytest

from lmix.models import LLMCall, LLMModel
from productions.models import Turn
from tests.fakes.llm_server import FakeLLMServer
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]

KEY = "sk-TURN-KEY-MARKER-5521"


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def remote_model(user, server):
    model = LLMModel(
        owner=user,
        name="Fake",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="fake-gpt",
    )
    model.api_key = KEY
    model.save()
    return model


def settled(turn_id, *statuses):
    return Turn.objects.filter(pk=turn_id, status__in=statuses).first()


def test_a_provider_failure_fails_the_turn_with_a_readable_reason_and_retry_branches(
    api, user, server, remote_model, production_factory
):
    production = production_factory(user, model=remote_model)
    url = f"/api/productions/{production.id}/turns"
    opener = api.post(url, {"content": "The scene opens."}, format="json").json()
    server.queue(status=401)
    failed = api.post(url, {}, format="json").json()

    turn = wait_for(lambda: settled(failed["id"], "failed", "done"))
    assert turn.status == "failed"
    assert "key" in turn.error.lower() and KEY not in turn.error
    call = LLMCall.objects.get(purpose="production.turn")
    assert call.error and KEY not in call.error

    retry = api.post(
        url, {"assistant": str(turn.assistant_id), "parent": opener["id"]}, format="json"
    ).json()
    retried = wait_for(lambda: settled(retry["id"], "done", "failed"))
    assert retried.status == "done" and retried.parent_id == turn.parent_id
    turn.refresh_from_db()
    assert turn.status == "failed"  # the failed sibling is left as it was


def test_stopping_mid_stream_keeps_the_partial_text(
    api, user, server, remote_model, production_factory
):
    production = production_factory(user, model=remote_model)
    server.queue(text=" ".join(f"word{i}" for i in range(60)), chunk_delay=0.05)
    turn_id = api.post(f"/api/productions/{production.id}/turns", {}, format="json").json()["id"]

    streaming = wait_for(
        lambda: Turn.objects.filter(pk=turn_id, status="streaming", token_count__gte=3).first()
    )
    assert streaming.content.startswith("word0")
    stopped = api.post(f"/api/productions/{production.id}/turns/{turn_id}/stop").json()
    assert stopped["status"] == "stopped"

    # The worker notices at its next delta and leaves the text it had; it never finishes.
    final = wait_for(lambda: (t := Turn.objects.get(pk=turn_id)).completion_tokens and t)
    assert final.status == "stopped"
    assert final.content.startswith("word0") and "word59" not in final.content


def test_deleting_a_production_mid_stream_ends_generation_quietly(
    api, user, server, remote_model, production_factory, caplog
):
    production = production_factory(user, model=remote_model)
    server.queue(text=" ".join(f"w{i}" for i in range(40)), chunk_delay=0.05)
    turn_id = api.post(f"/api/productions/{production.id}/turns", {}, format="json").json()["id"]
    wait_for(lambda: Turn.objects.filter(pk=turn_id, token_count__gte=2).exists())
    assert api.delete(f"/api/productions/{production.id}").status_code == 204
    # The worker stops at its next checkpoint, completes the call's record, reports no error.
    wait_for(
        lambda: LLMCall.objects.filter(
            purpose="production.turn", finished_at__isnull=False
        ).exists()
    )
    # The call's record is completed as the stream closes, just before the run lets go.
    wait_for(lambda: "is no longer this run's" in caplog.text)
    assert not Turn.objects.filter(pk=turn_id).exists()
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_a_live_turn_keeps_its_lease_while_the_model_is_silent(
    api, user, server, remote_model, production_factory, settings
):
    from productions.generation import turns_sweep

    # A lease of twenty beats: on a loaded host a beat can come late, and with five to
    # spare one stall of a few hundred milliseconds would restart the turn.
    settings.LMIX_LEASE_HEARTBEAT_SECONDS = 0.1
    settings.LMIX_LEASE_TIMEOUT_SECONDS = 2
    production = production_factory(user, model=remote_model)
    # Silent longer than the lease lasts: only the heartbeat keeps it alive.
    server.queue(text="one two three four", first_delay=2.5)
    turn_id = api.post(f"/api/productions/{production.id}/turns", {}, format="json").json()["id"]
    wait_for(lambda: settled(turn_id, "streaming"))
    while not settled(turn_id, "done", "failed"):
        assert turns_sweep()["restarted"] == 0
        time.sleep(0.05)
    turn = settled(turn_id, "done")
    assert turn.attempts == 1 and turn.content == "one two three four"


def test_stopping_the_running_turn_ends_autoplay(
    api, user, server, remote_model, production_factory
):
    production = production_factory(user, model=remote_model)
    server.queue(text=" ".join(f"w{i}" for i in range(80)), chunk_delay=0.05)
    url = f"/api/productions/{production.id}"
    assert (
        api.post(f"{url}/autoplay", {"count": 3}, format="json").json()["autoplay_remaining"] == 2
    )
    turn = wait_for(lambda: Turn.objects.filter(production=production, token_count__gte=1).first())
    api.post(f"{url}/turns/{turn.id}/stop")
    production.refresh_from_db()
    assert production.autoplay_remaining == 0
    assert wait_for(lambda: settled(turn.id, "stopped")).status == "stopped"


def test_an_unreachable_model_fails_the_turn_naming_the_endpoint_and_says_autoplay_stopped(
    api, user, remote_model, production_factory, monkeypatch
):
    from productions import events

    sent: list[dict] = []  # what goes on the channel layer
    send = events.group_send_on_commit
    monkeypatch.setattr(
        events,
        "group_send_on_commit",
        lambda group, event: (sent.append(event), send(group, event)),
    )
    remote_model.api_endpoint = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    remote_model.save()
    production = production_factory(user, model=remote_model)
    url = f"/api/productions/{production.id}"
    assert api.post(f"{url}/autoplay", {"count": 3}, format="json").status_code == 202

    turn = wait_for(lambda: Turn.objects.filter(production=production, status="failed").first())
    assert turn.error == (
        "The provider at http://127.0.0.1:9/v1 could not be reached: connection refused."
    )
    assert KEY not in turn.error
    production.refresh_from_db()
    assert production.autoplay_remaining == 0
    (ended,) = [e for e in sent if e["type"] == "autoplay" and e["autoplay_remaining"] == 0]
    assert ended["stopped_by"] == {"turn": str(turn.id), "error": turn.error}
    assert Turn.objects.filter(production=production).count() == 1  # no further turn


def test_a_turn_stopped_before_its_call_never_calls_the_model(
    user, server, remote_model, production_factory
):
    from productions.generation import turn_generate

    production = production_factory(user, model=remote_model)
    assistant = production.cast.first().assistant
    turn = Turn.objects.create(
        production=production,
        speaker_kind="assistant",
        assistant=assistant,
        speaker_name=assistant.display_name,
        status="pending",
    )
    Turn.move(turn.pk, "stopped")
    turn_generate(turn_id=turn.pk)  # a task arriving late: nothing to claim
    assert not server.requests_to("/chat/completions")
    assert Turn.objects.get(pk=turn.pk).status == "stopped"
