"""Leases and sweeps: lost turns are generated after all, a dead worker's turn runs again
from the start, too many deaths fail it visibly, a live worker's turn is never touched."""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from lmix.realtime import leases
from productions.generation import turn_lease_lapsed, turns_sweep
from productions.models import Turn
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def assistant_turn(production, **fields) -> Turn:
    assistant = production.cast.first().assistant
    return Turn.objects.create(
        production=production,
        speaker_kind="assistant",
        assistant=assistant,
        speaker_name=assistant.display_name,
        **fields,
    )


def dead_worker_turn(production, *, attempts: int = 1) -> Turn:
    """A turn a killed worker was streaming: its heartbeat stopped long ago."""
    turn = assistant_turn(
        production,
        status="streaming",
        content="Half a sent",
        token_count=3,
        lease_owner="gone-host:123:abcd",
        attempts=attempts,
    )
    Turn.objects.filter(pk=turn.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    turn.refresh_from_db()
    return turn


def test_a_pending_turn_whose_task_was_lost_gets_generated(user, production_factory):
    production = production_factory(user)
    turn = assistant_turn(production, status="pending")
    assert turns_sweep(pending_after=30)["requeued"] == 0  # too young
    Turn.objects.filter(pk=turn.pk).update(updated_at=timezone.now() - timedelta(minutes=1))
    assert turns_sweep(pending_after=30)["requeued"] == 1
    done = wait_for(lambda: Turn.objects.filter(pk=turn.pk, status="done").first())
    assert done.content


def test_a_dead_workers_turn_runs_again_from_the_start(user, production_factory):
    production = production_factory(user)
    turn = dead_worker_turn(production)
    sent = []
    with mock.patch("lmix.realtime.publish.group_send", side_effect=lambda g, p: sent.append(p)):
        assert turns_sweep()["restarted"] == 1
    restarted = [p for p in sent if p["type"] == "turn.restarted"]
    assert len(restarted) == 1 and restarted[0]["turn"]["content"] == ""
    assert restarted[0]["attempt"] == 2
    done = wait_for(lambda: Turn.objects.filter(pk=turn.pk, status="done").first())
    assert done.attempts == 2 and done.lease_owner != turn.lease_owner
    assert not done.content.startswith("Half a sent")  # nothing of the dead run is kept
    # The same text as a run that was never interrupted (the offline narrator is
    # deterministic), so nothing is duplicated.
    fresh = assistant_turn(production, status="pending", parent=turn.parent)
    from productions.generation import turn_generate

    Turn.objects.filter(pk=fresh.pk).update(created_at=turn.created_at)
    turn_generate(turn_id=fresh.pk)
    assert Turn.objects.get(pk=fresh.pk).content == done.content


def test_a_turn_whose_worker_keeps_dying_fails_with_a_retry(user, production_factory, settings):
    settings.LMIX_LEASE_MAX_RESTARTS = 2
    production = production_factory(user)
    turn = dead_worker_turn(production, attempts=3)
    assert turns_sweep() == {"requeued": 0, "restarted": 0, "failed": 1}
    turn.refresh_from_db()
    assert turn.status == "failed" and "Retry" in turn.error and "3 tries" in turn.error


def test_a_heartbeat_arriving_after_the_sweep_looked_keeps_the_turn(user, production_factory):
    production = production_factory(user)
    seen = dead_worker_turn(production)
    Turn.objects.filter(pk=seen.pk).update(heartbeat_at=timezone.now())  # alive after all
    assert turn_lease_lapsed(turn=seen) is None
    assert Turn.objects.get(pk=seen.pk).status == "streaming"


def test_the_heartbeat_renews_only_this_workers_leases(user, production_factory):
    production = production_factory(user)
    old = timezone.now() - timedelta(minutes=5)
    mine = assistant_turn(production, status="streaming", lease_owner=leases.worker_id())
    theirs = dead_worker_turn(production)
    Turn.objects.filter(pk=mine.pk).update(heartbeat_at=old)
    assert leases.renew_now() == 1
    assert Turn.objects.get(pk=mine.pk).heartbeat_at > old
    assert Turn.objects.get(pk=theirs.pk).heartbeat_at < old + timedelta(minutes=1)


def test_an_illegal_move_raises_and_a_move_from_the_wrong_state_does_nothing(
    user, production_factory
):
    production = production_factory(user)
    turn = assistant_turn(production, status="failed", content="Said.")
    with pytest.raises(ValueError):
        Turn.move(turn.pk, "pending", only_from=("failed",))
    with pytest.raises(ValueError):
        Turn.move(turn.pk, "no-such-status")
    assert Turn.move(turn.pk, "streaming") is False  # failed is final
    assert Turn.objects.get(pk=turn.pk).status == "failed"
    # Done is final but for "continue", which writes it on in a new run.
    Turn.objects.filter(pk=turn.pk).update(status="done")
    assert Turn.move(turn.pk, "streaming") is False
    assert Turn.move(turn.pk, "pending", only_from=("done",)) is True
