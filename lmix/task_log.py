"""What a worker says while it runs: one structured line per task start, end and failure,
and a ready line (docs/tasks.md, "Logs"). Lines are `key=value` pairs after the message,
so `grep task=synthesis.tasks.flesh_task` or a log shipper can pick them apart.

Django's LOGGING (config/settings.py) configures a worker's logging as it does the web's:
Celery is told not to replace it (`setup_logging`), so `--loglevel` changes nothing and
Celery's own lines stay at WARNING; these say what matters in one shape (how long a task
ran, on which queue).
"""

import logging
import time
from typing import Any

from celery.signals import setup_logging, task_failure, task_postrun, task_prerun, worker_ready

logger = logging.getLogger("lmix.tasks")
_started: dict[str, float] = {}


@setup_logging.connect
def _logging_is_djangos(**_kwargs: Any) -> None:
    """Connected, it keeps Celery from replacing the root logger's handlers and level."""


def _level(task: Any) -> int:
    # The sweeps run every second or two: their lines would drown the rest.
    return logging.DEBUG if task.name.endswith("sweep_task") else logging.INFO


def _queue(task: Any) -> str:
    info = getattr(task.request, "delivery_info", None) or {}
    return info.get("routing_key") or "-"


@worker_ready.connect
def _ready(sender: Any = None, **_kwargs: Any) -> None:
    """`sender` is the worker's consumer: which queues it reads, with how many threads."""
    task_consumer = getattr(sender, "task_consumer", None)
    queues = ",".join(sorted(q.name for q in getattr(task_consumer, "queues", ())))
    pool = getattr(sender, "pool", None)
    logger.info(
        "worker ready queues=%s pool=%s concurrency=%s",
        queues or "-",
        type(pool).__module__.rsplit(".", 1)[-1],
        getattr(pool, "limit", "-"),
    )


@task_prerun.connect
def _start(task_id: str = "", task: Any = None, args: Any = (), **_kwargs: Any) -> None:
    _started[task_id] = time.monotonic()
    logger.log(
        _level(task),
        "task start task=%s id=%s queue=%s args=%s",
        task.name,
        task_id,
        _queue(task),
        ",".join(map(str, args or ())),
    )


@task_postrun.connect
def _end(task_id: str = "", task: Any = None, state: str = "", **_kwargs: Any) -> None:
    began = _started.pop(task_id, None)
    seconds = time.monotonic() - began if began is not None else -1.0
    logger.log(
        _level(task),
        "task end task=%s id=%s state=%s seconds=%.3f",
        task.name,
        task_id,
        state,
        seconds,
    )


@task_failure.connect
def _failure(
    task_id: str = "", exception: BaseException | None = None, sender: Any = None, **_kwargs: Any
) -> None:
    logger.error(
        "task failure task=%s id=%s error=%s",
        getattr(sender, "name", "?"),
        task_id,
        type(exception).__name__,
        exc_info=exception,
    )
