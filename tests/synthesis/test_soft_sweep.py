"""The soft passes' backstop: one whose task was lost, or whose worker died mid-run, is
decided by heuristics; one still in time is left to its task."""

from datetime import timedelta

import pytest
from django.utils import timezone

from synthesis.models import Liquid, Pass
from synthesis.soft import soft_passes_sweep
from tests.synthesis.conftest import Scene

pytestmark = pytest.mark.django_db


def soft_pass(liquid: Liquid, **fields) -> Pass:
    return Pass.objects.create(
        frame_id=liquid.frame_id,
        seat_id=liquid.seat_id,
        kind="soft",
        trigger="submit",
        liquid=liquid,
        liquid_revision=liquid.revision,
        **fields,
    )


def test_lost_and_lapsed_soft_passes_are_decided_by_heuristics_and_fresh_ones_wait(user):
    scene = Scene(user)
    long_ago = timezone.now() - timedelta(hours=1)
    lost = scene.submit(scene.alice, "I punch Bob in the face")
    lost_pass = soft_pass(lost)
    Pass.objects.filter(pk=lost_pass.pk).update(created_at=long_ago)  # its task never ran
    lapsed = scene.submit(scene.bob, "I look around the quiet room slowly")
    lapsed_pass = soft_pass(lapsed, status="running", lease_owner="gone", heartbeat_at=long_ago)
    fresh = scene.submit(scene.alice, "I wait by the door")
    fresh_pass = soft_pass(fresh)

    assert soft_passes_sweep() == 2

    for liquid, pass_ in ((lost, lost_pass), (lapsed, lapsed_pass)):
        liquid.refresh_from_db()
        assert liquid.analysis_source == "heuristic"
        assert "lost with its worker" in liquid.analysis_note
        assert Pass.objects.get(pk=pass_.pk).status == "done"
    lost.refresh_from_db()
    assert lost.pscale == -3 and lost.targets  # the heuristics read the punch and its target
    fresh.refresh_from_db()
    assert fresh.analysis_source == ""
    assert Pass.objects.get(pk=fresh_pass.pk).status == "pending"
    assert soft_passes_sweep() == 0
