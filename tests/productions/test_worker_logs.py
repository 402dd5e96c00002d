"""A worker says what it does (issue 24, §12): a ready line naming its queues, one line per
task start and end, and a warning when its sweep finds work whose task was lost. A real
`celery worker` process, its log read from its file."""

import pytest

from productions.models import Turn
from productions.services import turn_request
from productions.tasks import turn_generate_task
from tests.live_processes import child_env, worker_process
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_worker_logs_when_it_is_ready_each_task_and_lost_work(
    user, production_factory, monkeypatch, tmp_path
):
    # Nobody in this process runs the turn: the child's sweep finds its task lost.
    monkeypatch.setattr(turn_generate_task, "delay", lambda *args: None)
    turn = turn_request(production=production_factory(user))
    log = tmp_path / "worker.log"
    env = child_env(LMIX_PENDING_REQUEUE_SECONDS="0", SWEEP_INTERVAL_SECONDS="0.5")

    with worker_process(env, log=log):
        wait_for(lambda: Turn.objects.filter(pk=turn.pk, status="done").exists(), 60)
        wait_for(lambda: "task end task=productions.tasks.turn_generate_task" in log.read_text())

    text = log.read_text()
    assert "worker ready queues=short,streams pool=thread concurrency=2" in text
    assert f"turn {turn.pk}: its task was lost; enqueued again" in text  # the sweep's
    started = next(row for row in text.splitlines() if "task start" in row and "turn_gene" in row)
    assert f"queue=streams args={turn.pk}" in started
    ended = next(row for row in text.splitlines() if "task end" in row and "turn_gene" in row)
    assert "state=SUCCESS seconds=" in ended
