"""The heartbeat: it renews a process's leases on its interval, not on every lease taken,
and a worker that keeps taking leases is renewed all the same."""

import time

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
