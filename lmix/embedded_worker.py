"""A real Celery worker on a thread of this process: embedded mode (`make run`) and the tests."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from celery.contrib.testing.worker import start_worker
from celery.worker import WorkController

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
