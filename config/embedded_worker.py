"""Real Celery workers on threads of this process: embedded mode (`make run`) and the tests."""

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from celery.contrib.testing.worker import start_worker
from celery.worker import WorkController
from django.conf import settings

from .celery import app


@contextmanager
def embedded_worker(
    concurrency: int | None = None, streams: int | None = None
) -> Iterator[WorkController]:
    """Run two thread-pool workers against the configured broker until the block exits:
    one for the short queue (`concurrency` threads) and one for the streams queue
    (`streams` threads), as services mode runs them (docs/tasks.md). Yields the first.

    On the in-memory broker only a worker in the same process can receive tasks, which is
    why embedded mode runs them here rather than as separate services.
    """
    with ExitStack() as stack:
        workers = [
            stack.enter_context(
                start_worker(
                    app,
                    pool="threads",
                    concurrency=threads,
                    queues=[queue],
                    hostname=f"{queue}@embedded",
                    perform_ping_check=False,
                    # kombu's event loop (its hub) is one per process: two workers sharing
                    # it on Redis stopped consuming. Each polls its broker on its own thread.
                    use_eventloop=False,
                    loglevel="WARNING",
                    shutdown_timeout=30,
                )
            )
            for queue, threads in [
                ("short", concurrency or settings.LMIX_SHORT_CONCURRENCY),
                ("streams", streams or settings.LMIX_STREAM_CONCURRENCY),
            ]
        ]
        yield workers[0]
