"""A real Celery worker on a thread of this process: embedded mode (`make run`) and the tests."""

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from celery.contrib.testing.worker import start_worker
from celery.worker import WorkController
from django.conf import settings

from .celery import app

logger = logging.getLogger(__name__)


@contextmanager
def embedded_worker(concurrency: int = 4) -> Iterator[WorkController]:
    """Run a thread-pool worker against the configured broker until the block exits.

    On the in-memory broker only a worker in the same process can receive tasks, which is
    why embedded mode runs one here rather than as a separate service.
    """
    with start_worker(
        app,
        pool="threads",
        concurrency=concurrency,
        perform_ping_check=False,
        loglevel="WARNING",
        shutdown_timeout=30,
    ) as worker:
        yield worker


@contextmanager
def embedded_sweeper() -> Iterator[threading.Thread]:
    """Beat's job in embedded mode: run each periodic task on a timer thread.

    Beat cannot run inside this process (it would fork away from the in-memory broker), so
    the schedule's tasks are sent from here instead.
    """
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(settings.SWEEP_INTERVAL_SECONDS):
            for entry in settings.CELERY_BEAT_SCHEDULE.values():
                try:
                    app.send_task(entry["task"])
                except Exception:
                    logger.warning("could not send %s", entry["task"], exc_info=True)

    thread = threading.Thread(target=loop, name="lmix-sweeper", daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        stop.set()
