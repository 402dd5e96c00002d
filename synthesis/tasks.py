"""Celery tasks of the frames engine: each takes an id, checks the database first and
calls one service, so a redelivered, duplicate or late task does nothing (docs/tasks.md)."""

from celery import shared_task


@shared_task(ignore_result=True)
def soft_pass_task(pass_id: str) -> None:
    from .soft import soft_pass_run

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
    from .medium import medium_pass_run

    medium_pass_run(pass_id=pass_id)


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
