"""Celery tasks of the frames engine: each takes an id, checks the database first and
calls one service, so a redelivered, duplicate or late task does nothing (docs/tasks.md).

Work that a sweep may enqueue again is enqueued through `*_enqueue`, which marks it as
queued (lmix/realtime/queued.py); its task clears the mark when it starts.
"""

from celery import shared_task

from lmix.realtime.queued import enqueue, started


def medium_key(pass_id: object) -> str:
    return f"medium:{pass_id}"


def flesh_key(pass_id: object) -> str:
    return f"flesh:{pass_id}"


def soft_key(pass_id: object) -> str:
    return f"soft:{pass_id}"


def medium_pass_enqueue(pass_id: object) -> None:
    enqueue(medium_pass_task, medium_key(pass_id), str(pass_id))


def flesh_enqueue(pass_id: object) -> None:
    enqueue(flesh_task, flesh_key(pass_id), str(pass_id))


def soft_pass_enqueue(pass_id: object) -> None:
    enqueue(soft_pass_task, soft_key(pass_id), str(pass_id))


@shared_task(ignore_result=True)
def soft_pass_task(pass_id: str) -> None:
    from .soft import soft_pass_run

    started(soft_key(pass_id))
    soft_pass_run(pass_id=pass_id)


@shared_task(ignore_result=True)
def window_fire_task(window_id: str) -> None:
    """Scheduled for the window's `expires_at`; fires it if it is still open and due, and
    runs its medium pass right here (a pass left pending by a crash is the sweep's)."""
    from .medium import medium_pass_run
    from .windows import window_fire

    pass_ = window_fire(window_id=window_id, enqueue=False)
    if pass_ is not None:
        medium_pass_run(pass_id=pass_.pk)


@shared_task(ignore_result=True)
def medium_pass_task(pass_id: str) -> None:
    """A medium pass's outcome (short queue); it hands the pass on to `flesh_task`."""
    from .medium import medium_pass_run

    started(medium_key(pass_id))
    medium_pass_run(pass_id=pass_id)


@shared_task(ignore_result=True)
def flesh_task(pass_id: str) -> None:
    """A medium pass's narrative, streamed (streams queue)."""
    from .medium.run import medium_flesh_run

    started(flesh_key(pass_id))
    medium_flesh_run(pass_id=pass_id)


@shared_task(ignore_result=True)
def frames_sweep_task() -> None:
    """Run by every worker and web process (and beat): fire overdue windows, settle lost
    soft passes, rerun medium passes whose worker died."""
    from .medium import passes_sweep
    from .soft import soft_passes_sweep
    from .windows import windows_sweep

    windows_sweep()
    soft_passes_sweep()
    passes_sweep()


@shared_task(ignore_result=True)
def ai_act_task(seat_id: str, outcome_id: str | None) -> None:
    """An AI seat answers an outcome (or the GM's advance) with liquid of its own."""
    from .ai_seats import ai_act

    ai_act(seat_id=seat_id, outcome_id=outcome_id)
