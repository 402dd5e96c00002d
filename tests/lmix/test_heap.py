"""Garbage collection in the web process (lmix/heap.py): at quiet moments, on its event
loop, never in a request's thread."""

import asyncio
import gc
import threading
import weakref
from types import SimpleNamespace
from unittest import mock

import pytest
from asgiref.sync import sync_to_async

from config.asgi import RequestThreads
from lmix.heap import QuietCollector, collector, due_generation
from lmix.realtime.transport import LimitedWebSocketProtocol


class Cycle:
    """Garbage only a collection frees (it refers to itself)."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def collections(monkeypatch) -> list[int]:
    """The generations collected, in order, instead of collecting them."""
    done: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: done.append(generation) or 0)
    return done


@pytest.mark.parametrize(
    "counts, due",
    [((10, 0, 0), None), ((701, 0, 0), 0), ((701, 11, 0), 1), ((5, 11, 11), 2), ((0, 3, 11), 2)],
)
def test_the_due_generation_is_the_oldest_past_pythons_thresholds(counts, due):
    with (
        mock.patch.object(gc, "get_count", return_value=counts),
        mock.patch.object(gc, "get_threshold", return_value=(700, 10, 10)),
    ):
        assert due_generation() == due


def test_nothing_is_collected_while_a_request_is_answered_or_a_socket_was_just_active(
    collections,
):
    quiet = QuietCollector(quiet=0.02, overdue=1.0)
    quiet.collected_at = 100.0
    with mock.patch("lmix.heap.due_generation", return_value=2):
        quiet.requests = 1
        assert quiet.collect(100.5) is None
        quiet.requests, quiet.active_at = 0, 100.49
        assert quiet.collect(100.5) is None
        assert collections == []
        assert quiet.collect(100.51) == 2  # 20 ms without a socket message, no request
    assert collections == [2]


def test_a_process_that_never_goes_quiet_is_still_collected_when_overdue(collections):
    quiet = QuietCollector(quiet=0.02, overdue=1.0)
    quiet.collected_at, quiet.requests = 100.0, 3
    with mock.patch("lmix.heap.due_generation", return_value=0):
        assert quiet.collect(100.9) is None
        assert quiet.collect(101.0) == 0
        assert quiet.collect(101.5) is None  # a second later again, not at every check
    assert collections == [0]


def test_a_quiet_moment_with_nothing_due_collects_nothing(collections):
    quiet = QuietCollector()
    with mock.patch("lmix.heap.due_generation", return_value=None):
        assert quiet.collect(1000.0) is None
    assert collections == []


async def test_on_its_loop_it_frees_cyclic_garbage_at_a_quiet_moment_and_not_during_a_request():
    quiet = QuietCollector(tick=0.01, quiet=0.01, overdue=60)
    quiet.start(asyncio.get_running_loop())
    try:
        assert not gc.isenabled()  # Python's own collection is off: it would run anywhere
        quiet.requests = 1
        garbage = Cycle()
        freed = weakref.ref(garbage)
        del garbage
        for _ in range(2_000):  # more than 700 new objects: a young collection is due
            Cycle()
        await asyncio.sleep(0.1)
        assert freed() is not None  # a request is being answered: not now
        quiet.requests = 0
        for _ in range(100):
            if freed() is None:
                break
            await asyncio.sleep(0.01)
        assert freed() is None
    finally:
        quiet.stop()
    assert gc.isenabled()


async def test_requests_count_themselves_busy_while_they_are_answered():
    threads = RequestThreads()
    seen: list[int] = []
    before = collector.requests
    async with threads.lend():
        await sync_to_async(lambda: seen.append(collector.requests))()
    assert seen == [before + 1]
    assert collector.requests == before


def test_serve_collects_on_daphnes_loop_while_it_serves_and_hands_back_after(monkeypatch):
    from django.core.management import call_command

    states: list[bool] = []

    class Server:
        listen_failure = ""

        def __init__(self, *, ready_callable, **_options) -> None:
            self.ready = ready_callable
            self.ws_factory = SimpleNamespace(protocol=None)  # limit_websockets sets it

        def run(self) -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)  # daphne makes its loop the current one
            try:
                self.ready()
                states.append(gc.isenabled())
                states.append(collector._loop is loop)
            finally:
                asyncio.set_event_loop(None)
                loop.close()

    built: list[Server] = []
    monkeypatch.setattr(
        "config.management.commands.serve.ListeningServer",
        lambda **kw: built.append(Server(**kw)) or built[0],
    )
    monkeypatch.setattr("config.management.commands.serve.freeze_startup_objects", lambda: None)
    call_command("serve", "--worker", "no", "--quiet")
    assert states == [False, True]
    assert built[0].ws_factory.protocol is LimitedWebSocketProtocol  # the sockets' limits
    assert gc.isenabled()
    assert collector._loop is None


def test_a_thread_allocating_meanwhile_triggers_no_collection():
    quiet = QuietCollector()
    loop = asyncio.new_event_loop()
    before = sum(s["collections"] for s in gc.get_stats())
    quiet.start(loop)  # not running: its checks never come
    try:
        worker = threading.Thread(target=lambda: [Cycle() for _ in range(20_000)])
        worker.start()
        worker.join()
        assert sum(s["collections"] for s in gc.get_stats()) == before
    finally:
        quiet.stop()
        loop.close()
