"""The sweeper thread every worker and web process runs: each schedule entry on its own
interval, first at once (tests/productions/test_worker_death.py runs it in real processes)."""

import threading
import time

import pytest

from lmix.realtime import sweeper
from tests.waiting import wait_for


@pytest.fixture
def recorded(monkeypatch, settings):
    settings.LMIX_SWEEPER = True
    settings.CELERY_BEAT_SCHEDULE = {
        "often": {"task": "often", "schedule": 0.1},
        "rarely": {"task": "rarely", "schedule": 0.6},
    }
    calls: list[str] = []
    lock = threading.Lock()

    def record(names=None):
        with lock:
            calls.extend(names)

    monkeypatch.setattr(sweeper, "sweep_once", record)
    yield calls
    sweeper.stop_sweeper()
    thread = sweeper._thread
    if thread is not None:
        thread.join(5)


def test_each_entry_runs_at_once_then_on_its_own_interval(recorded):
    sweeper.start_sweeper()
    wait_for(lambda: recorded.count("rarely") >= 3, timeout=10)
    often, rarely = recorded.count("often"), recorded.count("rarely")
    assert recorded[:2] == ["often", "rarely"]  # both at once when the process starts
    # In the time "rarely" ran 3 times (about 1.2 s), "often" ran about 12 times.
    assert often >= 2 * rarely


def test_no_sweeper_when_it_is_turned_off(recorded, settings):
    settings.LMIX_SWEEPER = False
    assert sweeper.start_sweeper() is None
    time.sleep(0.3)
    assert recorded == []
