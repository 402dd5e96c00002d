"""The heartbeat: it renews a process's leases on its interval, not on every lease taken,
and a worker that keeps taking leases is renewed all the same."""

import time

import pytest

from lmix.realtime import leases


def test_taking_leases_neither_renews_each_time_nor_starves_the_heartbeat(settings, monkeypatch):
    settings.LMIX_LEASE_HEARTBEAT_SECONDS = 0.2
    renewed: list[float] = []
    monkeypatch.setattr(leases, "_renewers", [lambda owner, now: renewed.append(1) or 1])
    takes = 0
    with leases.lease_held():  # one long lease, as a streaming model holds
        deadline = time.monotonic() + 1.2
        while time.monotonic() < deadline:
            with leases.lease_held():  # and short ones, taken faster than the interval
                takes += 1
            time.sleep(0.03)
    assert takes >= 20
    assert 1 <= len(renewed) <= takes // 2, (len(renewed), takes)


def test_a_kind_of_work_whose_claim_is_no_legal_move_is_refused():
    from productions.models import Turn

    with pytest.raises(ValueError):
        leases.leased(
            leases.LeasedWork(
                name="a turn that can never start",
                model=Turn,
                task="productions.tasks.turn_generate_task",
                transitions={"pending": set(), "streaming": set()},
                pending="pending",
                running="streaming",
                failed="failed",
                key=str,
                enqueue=lambda pk: None,
            )
        )
    assert all(work.name != "a turn that can never start" for work in leases._works)
