"""The job runtime's one sweep (lmix/realtime/leases.py), run by every worker and web
process (lmix/realtime/sweeper.py) and by beat."""

from celery import shared_task

from lmix.realtime.leases import jobs_sweep


@shared_task(ignore_result=True)
def jobs_sweep_task() -> None:
    """Every kind of leased work: lost tasks enqueued again, lapsed leases rerun or failed."""
    jobs_sweep()
