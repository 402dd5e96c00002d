"""Leases on running work: which worker holds it, and a heartbeat that says it still does.

A lease is two columns on the row being worked on (`lease_owner`, `heartbeat_at`). One
heartbeat thread per process renews every lease the process holds, so a model that is slow
to answer never looks dead, and a worker killed with `kill -9` stops renewing at once. The
sweeps (`sweeper.py`) find lapsed leases and run the work again elsewhere.
"""

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

logger = logging.getLogger(__name__)

# (worker id, now) → how many leases were renewed.
Renewer = Callable[[str, datetime], int]

_renewers: list[Renewer] = []
_lock = threading.Lock()
_holders = 0
_thread: threading.Thread | None = None
# Set when a lease is taken: the heartbeat re-reads its interval (a setting may have
# changed) without renewing now (every claim writes its own first heartbeat).
_wake = threading.Event()
_identity: tuple[int, str] | None = None


def worker_id() -> str:
    """This process's identity in leases: host, pid and a random part (pids are reused)."""
    global _identity
    pid = os.getpid()
    if _identity is None or _identity[0] != pid:  # a forked child is another worker
        _identity = (pid, f"{socket.gethostname()}:{pid}:{uuid.uuid4().hex[:8]}")
    return _identity[1]


def on_heartbeat(renew: Renewer) -> Renewer:
    """Register a function that renews this worker's leases of one kind of work."""
    if renew not in _renewers:
        _renewers.append(renew)
    return renew


def renew_now() -> int:
    """Renew every lease this process holds; returns how many rows were renewed."""
    owner, now = worker_id(), timezone.now()
    return sum(renew(owner, now) for renew in _renewers)


def _beat() -> None:
    last = time.monotonic()
    while True:
        left = last + settings.LMIX_LEASE_HEARTBEAT_SECONDS - time.monotonic()
        if left > 0 and _wake.wait(left):
            _wake.clear()
            continue  # keep the rhythm: a busy worker is renewed every interval all the same
        last = time.monotonic()
        with _lock:
            if _holders == 0:
                continue
        try:
            renew_now()
        except Exception:  # a missed beat is survivable; the lease has several to spare
            logger.warning("could not renew leases", exc_info=True)
        finally:
            close_old_connections()


@contextmanager
def lease_held() -> Iterator[str]:
    """While the block runs, this process's heartbeat keeps its leases alive. Yields the
    worker id to store as the lease's owner."""
    global _holders, _thread
    with _lock:
        _holders += 1
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_beat, name="lmix-heartbeat", daemon=True)
            _thread.start()
    _wake.set()
    try:
        yield worker_id()
    finally:
        with _lock:
            _holders -= 1
