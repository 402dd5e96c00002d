"""The job runtime: every kind of background work, registered once; leases on running
work (which worker holds it, and a heartbeat that says it still does); one sweep.

A kind of work (turns, medium passes and their narratives, soft passes, epilogues, author
and designer passes, state and significance passes, scene summaries, AI seats' acts)
describes itself once as a `LeasedWork` and registers it with `leased`: its rows and
lifecycle, the Celery task that runs it (and so its queue), how a lost task is enqueued
again and how a lapsed run is rerun, failed or settled. The claim (`lease_claim`), the
heartbeat (`lease_renew`), the sweep (`lease_sweep`, all kinds: `jobs_sweep`) and the
rerun-or-fail of a lapsed lease (`lease_lapsed`) exist once, here; docs/tasks.md's table
of jobs is generated from the registry (`jobs_table`).

A lease is two columns on the row being worked on (`lease_owner`, `heartbeat_at`), with
`attempts`, the runs started. One heartbeat thread per process renews every lease the
process holds, so a model that is slow to answer never looks dead, and a worker killed with
`kill -9` stops renewing at once.
"""

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections, transaction
from django.db.models import F, Model, Q, QuerySet
from django.utils import timezone

from lmix.lifecycle import lifecycle_move, lifecycle_sources
from lmix.prepared import Param, Prepared, Statement
from lmix.realtime.queued import enqueue_lost, is_queued

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


@dataclass(frozen=True)
class Handover:
    """A lease no process holds: a run hands its work to another queue's task
    (`lease_hand_over`), which takes it (`lease_take_over`). No heartbeat renews it, so it
    never lapses; the sweep enqueues that task again only when it is lost."""

    owner: str  # the lease owner meanwhile, e.g. "(awaiting a stream worker)"
    key: Callable[[object], str]  # its queued marker (lmix/realtime/queued.py)
    enqueue: Callable[[object], None]
    task: str  # the Celery task that takes it over
    what: str  # in the sweep's warning, after the work's name and id


@dataclass(eq=False)
class LeasedWork:
    """One kind of work under a lease.

    Its rows (`rows`) move pending → running when a task claims one (`lease_claim`); the
    heartbeat renews the running ones this process holds; the sweep (`lease_sweep`) finds
    pending work whose task was lost — pending since before LMIX_PENDING_REQUEUE_SECONDS
    (by `pending_since`) and not marked as queued — and enqueues it again, and running work
    whose lease lapsed (silent for LMIX_LEASE_TIMEOUT_SECONDS), which it runs again (at
    most LMIX_LEASE_MAX_RESTARTS times) or fails. Work with `settle` is never run again:
    lost or lapsed, it is settled at once.
    """

    name: str  # in logs: "turn", "medium pass"
    model: type[Model]
    task: str  # the Celery task that runs it (its route says the queue)
    transitions: Mapping[str, set[str]]
    pending: str
    running: str
    failed: str
    key: Callable[[object], str]  # its queued marker (lmix/realtime/queued.py)
    enqueue: Callable[[object], None]
    scope: Mapping[str, Any] = field(default_factory=dict)  # the kind's rows of `model`
    pending_since: str = "updated_at"
    counts_runs: bool = True  # a claim adds one to `attempts`
    handovers: tuple[Handover, ...] = ()
    # The sweep reads lapsed rows with this (`defer` the big columns, `select_related`).
    load: Callable[[QuerySet], QuerySet] = lambda rows: rows
    # Fields a rerun resets (besides the lease), from the row as the sweep read it.
    rerun_reset: Callable[[Any], dict[str, Any]] = lambda row: {}
    # Inside the rerun's transaction, once the row is pending again (clients told).
    on_rerun: Callable[[Any], None] = lambda row: None
    # The failure's reason; `{attempts}` is the runs it had.
    fail_message: str = "The worker stopped while running this ({attempts} tries). Retry it."
    before_fail: Callable[[Any], None] = lambda row: None  # e.g. lock the frame first
    on_failed: Callable[[Any], None] = lambda row: None  # what a failure leaves, told
    # Instead of failing: settle the work another way (the soft pass's heuristics), the row
    # as the sweep read it, pending or running. Returns whether it did.
    settle: Callable[[Any], bool] | None = None
    status_field: str = "status"  # its lifecycle's column
    error_field: str = "error"  # where a failure's reason goes
    what: str = ""  # docs/tasks.md: what the work is
    _claimable: dict[tuple, Prepared] = field(default_factory=dict, init=False, repr=False)

    def rows(self) -> QuerySet:
        return self.model.objects.filter(**self.scope)

    def move(self, pk: object, to: str, **kwargs: Any) -> bool:
        where = {**self.scope, **(kwargs.pop("where", None) or {})}
        return lifecycle_move(
            self.model, self.transitions, pk, to, where=where, field=self.status_field, **kwargs
        )

    def status(self, *statuses: str) -> dict[str, Any]:
        """A filter on the lifecycle's column: one status, or any of several."""
        if len(statuses) == 1:
            return {self.status_field: statuses[0]}
        return {f"{self.status_field}__in": list(statuses)}

    # The sweeps' reads: plain ORM, as a sweep runs once a second and mostly finds nothing.
    def lost(self, before: datetime) -> list[tuple[Any, datetime]]:
        """Pending since before `before`: (key, since)."""
        since = self.pending_since
        rows = self.rows().filter(**self.status(self.pending), **{f"{since}__lt": before})
        return list(rows.values_list("pk", since))

    def lapsed(self, before: datetime) -> QuerySet:
        """Running, its heartbeat (or its start, with none) older than `before`, and not
        waiting for a hand-over's task."""
        return (
            self.load(self.rows())
            .filter(**self.status(self.running))
            .exclude(lease_owner__in=[handover.owner for handover in self.handovers])
            .filter(
                Q(heartbeat_at__lt=before) | Q(heartbeat_at__isnull=True, updated_at__lt=before)
            )
        )

    def handed(self, handover: "Handover", before: datetime) -> list[tuple[Any, datetime]]:
        """Handed over to `handover`'s task before `before`: (key, handed at)."""
        rows = self.rows().filter(
            **self.status(self.running), lease_owner=handover.owner, heartbeat_at__lt=before
        )
        return list(rows.values_list("pk", "heartbeat_at"))


_works: list[LeasedWork] = []


def leased(work: LeasedWork) -> LeasedWork:
    """Register a kind of leased work: the heartbeat renews its leases from now on."""
    # A claim must be a legal move: this raises at import, not at the first task.
    lifecycle_sources(work.model, work.transitions, work.running, (work.pending,))
    if all(known.name != work.name for known in _works):
        _works.append(work)
        on_heartbeat(lambda owner, now: lease_renew(work, owner, now))
    return work


def lease_renew(work: LeasedWork, owner: str, now: datetime) -> int:
    """The heartbeat of one kind: every lease `owner` holds is still alive."""
    return (
        work.rows().filter(lease_owner=owner, **work.status(work.running)).update(heartbeat_at=now)
    )


def _claim_values(work: LeasedWork, owner: str) -> dict[str, Any]:
    values: dict[str, Any] = {"lease_owner": owner, "heartbeat_at": timezone.now()}
    if work.counts_runs:
        values["attempts"] = F("attempts") + 1
    return values


def lease_claim(
    work: LeasedWork, pk: object, owner: str, *, where: dict[str, Any] | None = None
) -> bool:
    """Pending → running under `owner`'s lease (and a run more counted), if the row is
    still pending (and matches `where`): of two racing tasks exactly one wins."""
    return work.move(
        pk, work.running, only_from=(work.pending,), where=where, **_claim_values(work, owner)
    )


def lease_claiming(work: LeasedWork, pk: object, owner: str, **fixed: Any) -> Statement:
    """`lease_claim` as a statement to send `together` with a read (one round trip), of
    rows that also match the constant filters `fixed`. Its result: how many it claimed."""
    key = tuple(sorted(fixed.items()))
    claimable = work._claimable.get(key)
    if claimable is None:
        sources = lifecycle_sources(work.model, work.transitions, work.running, (work.pending,))
        claimable = work._claimable[key] = Prepared(
            lambda: work.rows().filter(pk=Param(work.model, "pk"), **work.status(*sources), **fixed)
        )
    values = _claim_values(work, owner)
    counted = {"attempts": values.pop("attempts")} if work.counts_runs else {}
    values = {work.status_field: work.running, **values, "updated_at": values["heartbeat_at"]}
    return claimable.updating(tuple(values), fixed=counted, pk=pk, **values)


def lease_hand_over(
    work: LeasedWork, pk: object, handover: Handover, *, where: dict[str, Any]
) -> bool:
    """A running row whose lease matches `where` goes to `handover`'s task: no process
    holds it meanwhile. Returns whether it was still this run's to hand over."""
    return bool(
        work.rows()
        .filter(pk=pk, **work.status(work.running), **where)
        .update(lease_owner=handover.owner, heartbeat_at=timezone.now())
    )


def lease_take_over(work: LeasedWork, pk: object, handover: Handover, owner: str) -> bool:
    """`handover`'s task takes the row under `owner`'s lease; a duplicate finds it taken."""
    return bool(
        work.rows()
        .filter(pk=pk, **work.status(work.running), lease_owner=handover.owner)
        .update(lease_owner=owner, heartbeat_at=timezone.now())
    )


def lease_sweep(
    work: LeasedWork, *, pending_after: float | None = None, lapsed_after: float | None = None
) -> dict[str, int]:
    """The backstop for one kind of work: enqueue again (or settle) work whose task was
    lost — never work still queued — and run again (or fail, or settle) work whose worker
    stopped renewing its lease.

    Returns:
        How many were re-enqueued, restarted and failed (or settled).
    """
    now = timezone.now()
    if pending_after is None:
        pending_after = settings.LMIX_PENDING_REQUEUE_SECONDS
    if lapsed_after is None:
        lapsed_after = settings.LMIX_LEASE_TIMEOUT_SECONDS
    counts = {"requeued": 0, "restarted": 0, "failed": 0}
    lost_before = now - timedelta(seconds=pending_after)
    lost = work.lost(lost_before)
    if work.settle is None:
        since = work.pending_since
        for pk, at in lost:
            counts["requeued"] += enqueue_lost(
                work.key(pk),
                work.rows().filter(pk=pk, **work.status(work.pending), **{since: at}),
                {since: now},
                lambda pk=pk: work.enqueue(pk),
                f"{work.name} {pk}",
            )
    elif lost:
        keys = [pk for pk, _ in lost if not is_queued(work.key(pk))]  # queued: its task runs it
        for row in work.load(work.rows()).filter(pk__in=keys) if keys else ():
            counts["failed"] += lease_lapsed(work, row) == "failed"
    for handover in work.handovers:
        for pk, at in work.handed(handover, lost_before):
            counts["requeued"] += enqueue_lost(
                handover.key(pk),
                work.rows().filter(pk=pk, lease_owner=handover.owner, heartbeat_at=at),
                {"heartbeat_at": now},
                lambda pk=pk, handover=handover: handover.enqueue(pk),
                f"{work.name} {pk} {handover.what}",
            )
    before = now - timedelta(seconds=lapsed_after)
    for row in work.lapsed(before):
        outcome = lease_lapsed(work, row)
        if outcome:
            counts[outcome] += 1
    return counts


@transaction.atomic
def lease_lapsed(work: LeasedWork, row: Any) -> str | None:
    """Its worker is gone (or, pending, its task): run it again from where it stands, or
    fail (or settle) it once it has had its runs. Every move is conditional on the lease
    being exactly as the sweep read it, so a heartbeat landing meanwhile keeps the row.

    Returns:
        "restarted", "failed", or None when the row changed meanwhile (a late heartbeat).
    """
    if work.settle is not None:
        return "failed" if work.settle(row) else None
    unchanged = {
        "lease_owner": row.lease_owner,
        "attempts": row.attempts,
        "heartbeat_at": row.heartbeat_at,
    }
    if row.attempts <= settings.LMIX_LEASE_MAX_RESTARTS:
        if not work.move(
            row.pk,
            work.pending,
            only_from=(work.running,),
            where=unchanged,
            lease_owner="",
            heartbeat_at=None,
            **work.rerun_reset(row),
        ):
            return None
        work.on_rerun(row)
        pk = row.pk
        transaction.on_commit(lambda: work.enqueue(pk))
        logger.warning(
            "%s %s: lease lapsed (worker %s silent); running it again (run %d)",
            work.name,
            pk,
            row.lease_owner,
            row.attempts + 1,
        )
        return "restarted"
    work.before_fail(row)
    if not work.move(
        row.pk,
        work.failed,
        only_from=(work.running,),
        where=unchanged,
        lease_owner="",
        **{work.error_field: work.fail_message.format(attempts=row.attempts)},
    ):
        return None
    work.on_failed(row)
    logger.warning(
        "%s %s: lease lapsed (worker %s silent) after %d runs; failed",
        work.name,
        row.pk,
        row.lease_owner,
        row.attempts,
    )
    return "failed"


def jobs() -> list[LeasedWork]:
    """Every kind of work registered so far (all of them once the apps' tasks are imported)."""
    return list(_works)


def jobs_sweep() -> dict[str, dict[str, int]]:
    """The one sweep: every kind of leased work (`lease_sweep`). Returns each kind's counts
    where something was done."""
    done = {}
    for work in _works:
        counts = lease_sweep(work)
        if any(counts.values()):
            done[work.name] = counts
    return done


def jobs_table() -> str:
    """docs/tasks.md's table of jobs, from the registry (its tests compare the two)."""
    routes = settings.CELERY_TASK_ROUTES

    def task(name: str) -> str:
        queue = routes.get(name, {}).get("queue", settings.CELERY_TASK_DEFAULT_QUEUE)
        return f"`{name.rsplit('.', 1)[-1]}` ({queue})"

    rows = [
        "| job | its rows | task (queue) | task lost | worker gone |",
        "| --- | --- | --- | --- | --- |",
    ]
    for work in sorted(_works, key=lambda w: w.name):
        scope = ", ".join(f"{k.removesuffix('__in')} {_values(v)}" for k, v in work.scope.items())
        where = f"`{work.model.__name__}`" + (f" ({scope})" if scope else "")
        tasks = ", then ".join(task(t) for t in (work.task, *(h.task for h in work.handovers)))
        if work.settle is not None:
            lost = gone = f"settled another way (`{work.settle.__name__}`)"
        else:
            lost, gone = "sent again", "run again, then failed"
        rows.append(f"| {work.name}: {work.what} | {where} | {tasks} | {lost} | {gone} |")
    return "\n".join(rows)


def _values(value: Any) -> str:
    if isinstance(value, (list, tuple, set)):
        return " or ".join(str(v) for v in value)
    return str(value)
