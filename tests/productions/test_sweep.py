"""The sweeper: lost turns are generated after all; turns of a dead worker fail visibly."""

from datetime import timedelta

import pytest
from django.utils import timezone

from productions.models import Turn
from productions.services import turns_sweep
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def test_a_pending_turn_whose_task_was_lost_gets_generated(user, production_factory):
    production = production_factory(user)
    assistant = production.cast.first().assistant
    turn = Turn.objects.create(
        production=production,
        speaker_kind="assistant",
        assistant=assistant,
        speaker_name=assistant.display_name,
        status="pending",
    )
    assert turns_sweep(pending_after=30) == {"requeued": 0, "failed": 0}  # too young
    Turn.objects.filter(pk=turn.pk).update(created_at=timezone.now() - timedelta(minutes=1))
    assert turns_sweep(pending_after=30)["requeued"] == 1
    done = wait_for(lambda: Turn.objects.filter(pk=turn.pk, status="done").first())
    assert done.content


def test_a_turn_stuck_streaming_fails_with_a_reason(user, production_factory):
    production = production_factory(user)
    turn = Turn.objects.create(
        production=production,
        speaker_kind="assistant",
        speaker_name="A",
        status="streaming",
        content="Half",
    )
    Turn.objects.filter(pk=turn.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    assert turns_sweep(stale_after=60)["failed"] == 1
    turn.refresh_from_db()
    assert turn.status == "failed" and "Retry" in turn.error and turn.content == "Half"
