"""`kill -9` of a real worker process mid-stream, with no beat running: the next worker
finds the lapsed lease, generates the turn again from the start, and it ends `done` with
the full text, nothing duplicated. A web process with no worker sweeps too."""

from datetime import timedelta

import pytest
from django.utils import timezone

from lmix.models import LLMCall, LLMModel
from productions.models import Turn
from productions.services import turn_request
from productions.tasks import turn_generate_task
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.live_processes import child_env, free_port, kill_9, web_process, worker_process
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

TEXT = " ".join(f"word{i}" for i in range(80))


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        # Every request (the first run and the rerun) streams the same slow answer.
        fake.responder = lambda request: Reply(text=TEXT, chunk_delay=0.05)
        yield fake


def test_a_turn_survives_kill_9_of_its_worker(user, server, production_factory, monkeypatch):
    model = LLMModel.objects.create(
        owner=user,
        name="Fake",
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="fake-gpt",
    )
    production = production_factory(user, model=model)
    # Nobody in this process runs it (the suite's in-process worker shares this process's
    # broker): the child workers' own sweeps pick the pending turn up.
    monkeypatch.setattr(turn_generate_task, "delay", lambda *args: None)
    turn = turn_request(production=production)
    env = child_env(
        LMIX_LEASE_HEARTBEAT_SECONDS="0.5",
        LMIX_LEASE_TIMEOUT_SECONDS="6",  # missed beats on a loaded machine must not lapse it
        LMIX_PENDING_REQUEUE_SECONDS="0",
        SWEEP_INTERVAL_SECONDS="0.5",
        LMIX_LLM_ALLOWED_NETWORKS="127.0.0.0/8",
    )
    with worker_process(env) as first:
        wait_for(lambda: Turn.objects.filter(pk=turn.pk, token_count__gte=10).first(), 60)
        kill_9(first)
    stopped_at = Turn.objects.get(pk=turn.pk)
    assert stopped_at.status == "streaming" and 0 < stopped_at.token_count < 80

    with worker_process(env):
        done = wait_for(
            lambda: Turn.objects.filter(pk=turn.pk, status__in=["done", "failed"]).first(), 90
        )
    assert done.status == "done", done.error
    assert done.content == TEXT  # the whole text once: nothing lost, nothing repeated
    assert done.attempts >= 2  # killed, then run again
    calls = LLMCall.objects.filter(purpose="production.turn").order_by("created_at")
    # The killed run's call was recorded before its stream and never completed.
    assert calls[0].finished_at is None and all(c.finished_at for c in calls[1:])


def test_a_web_process_without_a_worker_restarts_a_dead_workers_turn(user, production_factory):
    production = production_factory(user)
    assistant = production.cast.first().assistant
    turn = Turn.objects.create(
        production=production,
        speaker_kind="assistant",
        assistant=assistant,
        speaker_name=assistant.display_name,
        status="streaming",
        content="Half a sent",
        token_count=3,
        lease_owner="gone-host:123:abcd",
        attempts=1,
    )
    Turn.objects.filter(pk=turn.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    env = child_env(SWEEP_INTERVAL_SECONDS="0.5")
    with web_process(env, port=free_port(), worker=False):
        # No worker anywhere: the turn goes back to pending for one to take, text reset.
        restarted = wait_for(
            lambda: Turn.objects.filter(pk=turn.pk, status="pending").first(), timeout=60
        )
    assert restarted.content == "" and restarted.token_count == 0 and restarted.lease_owner == ""
