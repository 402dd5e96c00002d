"""Timer windows: opened by a commit, fired once when they expire (a task scheduled for
`expires_at` is the fast path, the sweep the backstop), cancelled by an interrupt, frozen
while the frame is paused. Every move is a conditional update, so a duplicate or late task
never fires a window twice (docs/tasks.md)."""

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from lmix.errors import ApplicationError

from .budget import Work, budget_admits, window_work
from .enqueue import medium_pass_enqueue, window_fire_at
from .events import notify_liquid, notify_window
from .frame_events import lock_frame
from .models import (
    Face,
    Frame,
    FrameMode,
    FrameStatus,
    Liquid,
    LiquidStatus,
    Outcome,
    Pass,
    PassKind,
    PassStatus,
    Trigger,
    Window,
    WindowStatus,
)

logger = logging.getLogger(__name__)

# pscale → real-time window in seconds at tempo 1 (seeds: −3 ≈ 3–5 s … +1 ≥ 5 min).
WINDOW_SECONDS = {-3: 4.0, -2: 7.5, -1: 22.5, 0: 90.0, 1: 300.0, 2: 900.0}
DEFAULT_PSCALE = -1
# Interrupts merged into one pass: the newest reasons kept, within what a prompt line holds.
REASON_MAX = 500
REASONS_KEPT = 20


def window_seconds(liquid: Liquid) -> float:
    """The liquid's window at tempo 1: the soft pass's answer, else its pscale's."""
    if liquid.window_seconds:
        return float(liquid.window_seconds)
    return WINDOW_SECONDS.get(liquid.pscale if liquid.pscale is not None else DEFAULT_PSCALE, 22.5)


def _open_window(seat_id: object) -> Window | None:
    """The seat's open window, locked (a seat has one at most: a constraint)."""
    return next(
        iter(Window.objects.select_for_update().filter(seat=seat_id, status=WindowStatus.OPEN)),
        None,
    )


def window_for_commit(*, frame: Frame, liquid: Liquid) -> Window:
    """The live window of the seat of liquid being committed (the caller stores the liquid
    in it), opening one if there is none.

    A second commit while the window is open accumulates in it (it does not extend it). In
    shared mode or at tempo 0 the window is born firing (trigger `commit`) and its medium
    pass enqueued with the commit: no timer and no second transaction before the outcome.
    Call inside the committing transaction, the frame locked.
    """
    window = _open_window(liquid.seat_id)
    immediate = frame.mode == FrameMode.SHARED or frame.tempo == 0
    paused = frame.status == FrameStatus.PAUSED
    # Over the frame's model budget, an immediate window opens due now instead: the sweep
    # fires it once the minute frees (synthesis/budget.py).
    if (
        window is None
        and immediate
        and not paused
        and budget_admits(
            frame_id=frame.pk,
            kind=Work.AI if liquid.author_id is None else Work.HUMAN,
            what=f"commit:{liquid.pk}",
        )
    ):
        window = Window.objects.create(
            frame=frame,
            seat_id=liquid.seat_id,
            status=WindowStatus.FIRING,
            pscale=liquid.pscale if liquid.pscale is not None else DEFAULT_PSCALE,
            expires_at=timezone.now(),
            trigger=Trigger.COMMIT,
        )
        notify_window("window.fired", window)
        _medium_pass_start(
            frame_id=frame.pk, seat_id=liquid.seat_id, window=window, trigger=Trigger.COMMIT
        )
    elif window is None:
        now = timezone.now()
        seconds = 0.0 if immediate else window_seconds(liquid) * frame.tempo
        window = Window.objects.create(
            frame=frame,
            seat_id=liquid.seat_id,
            pscale=liquid.pscale if liquid.pscale is not None else DEFAULT_PSCALE,
            expires_at=None if paused else now + timedelta(seconds=seconds),
            remaining_seconds=seconds if paused else None,
            trigger=Trigger.COMMIT if immediate else Trigger.EXPIRY,
        )
        notify_window("window.opened", window)
        if not paused:
            _schedule(window)
    return window


def _schedule(window: Window) -> None:
    eta = window.expires_at
    transaction.on_commit(lambda: window_fire_at(window.pk, eta))


def window_fire(*, window_id: object, enqueue: bool = True, force: bool = False) -> Pass | None:
    """Fire an expired window: claim it (open → firing, only once it expired and its frame
    is open), then start its medium pass. Returns the pass, or None when there was nothing
    to fire (not due yet, paused, already fired, cancelled) or the frame's model budget
    does not admit it now (unless `force`, the GM's): it then stays open and due, and the
    sweep fires it once the minute frees. A window an interrupt left due (deferred over
    budget) wakes its pass with the interrupts it gathered."""
    window = Window.objects.select_related("seat").filter(pk=window_id).first()
    if window is None:
        return None
    due = window.expires_at is not None and window.expires_at <= timezone.now()
    if not force and window.status == WindowStatus.OPEN and due:
        kind = window_work(window)
        if not budget_admits(frame_id=window.frame_id, kind=kind, what=f"window:{window.pk}"):
            return None
    with transaction.atomic():
        # Locks in the frame's order (frame, then pass, then window), as the medium pass.
        frame = Frame.objects.select_for_update().get(pk=window.frame_id)
        if frame.status != FrameStatus.OPEN:
            return None
        if not Window.move(
            window.pk,
            WindowStatus.FIRING,
            only_from=(WindowStatus.OPEN,),
            where={"expires_at__lte": timezone.now()},
        ):
            return None
        window.refresh_from_db()
        notify_window("window.fired", window)
        trigger = window.trigger or Trigger.EXPIRY
        return _medium_pass_start(
            enqueue=enqueue,
            frame_id=window.frame_id,
            seat_id=window.seat_id,
            window=window,
            trigger=trigger,
            interrupt=_deferred_interrupt(window) if trigger == Trigger.INTERRUPT else None,
        )


def _deferred_interrupt(window: Window) -> dict:
    """The interrupts a window waited with (`_interrupt_deferred`): those of the outcomes
    since it opened that name its seat, less any a pass of the seat already took."""
    seat = str(window.seat_id)
    taken = set()
    for interrupt in Pass.objects.filter(
        seat_id=window.seat_id, trigger=Trigger.INTERRUPT, created_at__gte=window.opened_at
    ).values_list("interrupt", flat=True):
        taken |= set(interrupt.get("outcomes") or [interrupt.get("outcome")])
    merged: dict = {}
    # A held outcome's interrupts wake nobody before its release (`outcome_release`).
    outcomes = Outcome.objects.filter(
        frame_id=window.frame_id, created_at__gte=window.opened_at, held=False
    )
    for outcome_id, interrupts in outcomes.order_by("seq").values_list("pk", "interrupts"):
        if str(outcome_id) in taken:
            continue
        for interrupt in interrupts or []:
            if str(interrupt.get("seat")) == seat:
                merged = _merge(merged, str(outcome_id), str(interrupt.get("reason", "")))
    return merged


def _merge(interrupt: dict, outcome_id: str, reason: str) -> dict:
    """`interrupt` ({outcome, reason}, empty for none) with one more: the newest outcome is
    the one its pass must know; the reasons join, newest kept (`gather` reads `reason`);
    `outcomes` lists every one merged."""
    if not interrupt:
        return {"outcome": outcome_id, "reason": reason}
    outcomes = interrupt.get("outcomes") or [interrupt["outcome"]]
    reasons = [*(interrupt.get("reasons") or [interrupt.get("reason", "")]), reason]
    reasons = reasons[-REASONS_KEPT:]
    kept = list(reasons)
    while len(kept) > 1 and len(" / ".join(kept)) > REASON_MAX:
        kept.pop(0)
    return {
        "outcome": outcome_id,
        "reason": " / ".join(kept),
        "outcomes": [*outcomes, outcome_id][-REASONS_KEPT:],
        "reasons": reasons,
    }


def _medium_pass_start(
    *,
    frame_id: object,
    seat_id: object,
    window: Window | None,
    trigger: str,
    interrupt: dict | None = None,
    enqueue: bool = True,
) -> Pass:
    """A pending medium pass, its task enqueued once the transaction commits (unless the
    caller, a worker's task, runs it itself: one Celery hop less before the outcome)."""

    pass_ = Pass.objects.create(
        frame_id=frame_id,
        seat_id=seat_id,
        kind=PassKind.MEDIUM,
        trigger=trigger,
        window=window,
        interrupt=interrupt or {},
    )
    if enqueue:
        transaction.on_commit(lambda: medium_pass_enqueue(pass_.pk))
    return pass_


@transaction.atomic
def window_interrupt(
    *, frame: Frame, seat_id: object, outcome: Outcome, reason: str
) -> Pass | None:
    """An outcome names this seat as an interrupt target: its open window (if any) is
    cancelled and its medium pass wakes now with the interrupt in its context, taking the
    seat's committed liquid along. If the seat's pass is running already and no open
    window waits, the interrupt gets a pass of its own, without a window.

    Interrupts are coalesced per seat: while an interrupt pass of the seat is pending, a
    new interrupt merges into it (its reason added) instead of waking another; so a seat
    has at most one running and one pending interrupt pass. Over the frame's model budget
    the interrupt waits (`_interrupt_deferred`) and None is returned. Called under the
    frame's lock (the outcome's)."""
    pending = (
        Pass.objects.select_for_update()
        .filter(
            seat_id=seat_id,
            kind=PassKind.MEDIUM,
            trigger=Trigger.INTERRUPT,
            status=PassStatus.PENDING,
        )
        .order_by("created_at", "id")
        .first()
    )
    if pending is not None:
        pending.interrupt = _merge(pending.interrupt or {}, str(outcome.pk), reason)
        pending.save(update_fields=["interrupt", "updated_at"])
        return pending
    if not budget_admits(frame_id=frame.pk, kind=Work.INTERRUPT, what=f"outcome:{outcome.pk}"):
        _interrupt_deferred(frame=frame, seat_id=seat_id, outcome=outcome)
        return None
    interrupt = {"outcome": str(outcome.pk), "reason": reason}
    live = list(
        Window.objects.select_for_update().filter(
            seat_id=seat_id, status__in=[WindowStatus.OPEN, WindowStatus.FIRING]
        )
    )
    cancelled = next((w for w in live if w.status == WindowStatus.OPEN), None)
    firing = [w.pk for w in live if w.status == WindowStatus.FIRING]
    if cancelled is not None and Window.move(
        cancelled.pk, WindowStatus.CANCELLED, only_from=(WindowStatus.OPEN,)
    ):
        cancelled.refresh_from_db()
        notify_window("window.cancelled", cancelled, cause={"kind": "interrupt", **interrupt})
    window = None
    # The liquid of a cancelled window comes along (a firing window's pass narrates its
    # own); with nothing to take while the seat's pass runs, that pass has its liquid.
    if cancelled is not None or not firing:
        window = Window.objects.create(
            frame=frame,
            seat_id=seat_id,
            status=WindowStatus.FIRING,
            pscale=cancelled.pscale if cancelled else DEFAULT_PSCALE,
            expires_at=timezone.now(),
            trigger=Trigger.INTERRUPT,
        )
        notify_window("window.fired", window)  # born firing: clients learn of it now
        # An author's or designer's writing from this seat is no action: never in a window.
        Liquid.objects.filter(
            seat_id=seat_id, status=LiquidStatus.COMMITTED, face=Face.PLAYER
        ).exclude(window_id__in=firing).update(window=window)
    woken = interrupt
    if cancelled is not None and cancelled.trigger == Trigger.INTERRUPT:
        # It waited with interrupts of its own (`_interrupt_deferred`): they come along.
        woken = _deferred_interrupt(cancelled)
        if str(outcome.pk) not in (woken.get("outcomes") or [woken.get("outcome")]):
            woken = _merge(woken, str(outcome.pk), reason)
    return _medium_pass_start(
        frame_id=frame.pk,
        seat_id=seat_id,
        window=window,
        trigger=Trigger.INTERRUPT,
        interrupt=woken,
    )


def _interrupt_deferred(*, frame: Frame, seat_id: object, outcome: Outcome) -> Window:
    """An interrupt the budget does not admit now waits as the seat's open window made due
    now (its own, or a new one, opened as of `outcome`), marked `interrupt`: the sweep
    fires it once the minute frees, and its pass gathers every interrupt since the window
    opened (`_deferred_interrupt`). Nothing is lost, and any number of interrupts wake one
    pass."""
    now = timezone.now()
    window = _open_window(seat_id)
    paused = frame.status == FrameStatus.PAUSED
    if window is None:
        window = Window.objects.create(
            frame=frame,
            seat_id=seat_id,
            pscale=DEFAULT_PSCALE,
            expires_at=None if paused else now,
            remaining_seconds=0.0 if paused else None,
            trigger=Trigger.INTERRUPT,
        )
        # Opened as of its interrupt: `_deferred_interrupt` reads outcomes from then on.
        window.opened_at = min(window.opened_at, outcome.created_at)
        Window.objects.filter(pk=window.pk).update(opened_at=window.opened_at)
        notify_window("window.opened", window)
        return window
    window.trigger = Trigger.INTERRUPT
    if window.expires_at is None:
        window.remaining_seconds = 0.0
    else:
        window.expires_at = min(window.expires_at, now)
    window.save(update_fields=["trigger", "expires_at", "remaining_seconds", "updated_at"])
    return window


@transaction.atomic
def window_fire_now(*, window: Window) -> Pass:
    """The GM fires an open window now instead of at its time.

    Raises:
        ApplicationError: the frame is not open, or the window is no longer open (409).
    """
    frame = Frame.objects.select_for_update().get(pk=window.frame_id)
    if frame.status != FrameStatus.OPEN:
        raise ApplicationError("Resume the frame first.", status_code=409)
    if not Window.objects.filter(pk=window.pk, status=WindowStatus.OPEN).update(
        expires_at=timezone.now(), remaining_seconds=None
    ):
        raise ApplicationError("This window is no longer open.", status_code=409)
    pass_ = window_fire(window_id=window.pk, force=True)  # the GM's call: over budget too
    if pass_ is None:  # unreachable under the frame's lock; said plainly all the same
        raise ApplicationError("This window could not be fired.", status_code=409)
    return pass_


@transaction.atomic
def window_cancel(*, window: Window) -> Window:
    """The GM cancels an open window: nobody's pass wakes, and the intentions in it go back
    to their player as submitted (to revise and commit anew): nothing written is lost.

    Raises:
        ApplicationError: the window is no longer open (409).
    """
    lock_frame(window.frame_id)
    if not Window.move(window.pk, WindowStatus.CANCELLED, only_from=(WindowStatus.OPEN,)):
        raise ApplicationError("This window is no longer open.", status_code=409)
    window.refresh_from_db()
    notify_window("window.cancelled", window, cause={"kind": "gm"})
    frame = Frame.objects.get(pk=window.frame_id)
    for liquid in Liquid.objects.filter(window=window, status=LiquidStatus.COMMITTED):
        Liquid.move(
            liquid.pk,
            LiquidStatus.SUBMITTED,
            only_from=(LiquidStatus.COMMITTED,),
            committed_at=None,
            window=None,
        )
        liquid.refresh_from_db()
        notify_liquid("liquid.updated", liquid, frame=frame)
    return window


@transaction.atomic
def windows_pause(*, frame: Frame) -> list[Window]:
    """Freeze every open window of the frame, keeping the time it had left.

    Returns:
        The frozen windows (`remaining_seconds` set, no `expires_at`).
    """
    now = timezone.now()
    frozen = []
    for window in Window.objects.select_for_update().filter(
        frame=frame, status=WindowStatus.OPEN, expires_at__isnull=False
    ):
        window.remaining_seconds = max(0.0, (window.expires_at - now).total_seconds())
        window.expires_at = None
        window.save(update_fields=["expires_at", "remaining_seconds", "updated_at"])
        frozen.append(window)
    return frozen


@transaction.atomic
def windows_resume(*, frame: Frame) -> list[Window]:
    """Give every frozen window of the frame back the time it had left, and schedule it.

    Returns:
        The windows running again (their new `expires_at`).
    """
    now = timezone.now()
    resumed = []
    for window in Window.objects.select_for_update().filter(
        frame=frame, status=WindowStatus.OPEN, expires_at__isnull=True
    ):
        window.expires_at = now + timedelta(seconds=window.remaining_seconds or 0)
        window.remaining_seconds = None
        window.save(update_fields=["expires_at", "remaining_seconds", "updated_at"])
        _schedule(window)
        resumed.append(window)
    return resumed


def windows_sweep() -> int:
    """The backstop: fire every open window that expired and whose task was lost (or has
    not run yet). Returns how many fired."""
    due = Window.objects.filter(
        status=WindowStatus.OPEN, expires_at__lte=timezone.now(), frame__status=FrameStatus.OPEN
    ).values_list("pk", flat=True)
    return sum(window_fire(window_id=window_id) is not None for window_id in due)
