"""Running a medium pass under a lease, in its fixed order (gather → compile → bones →
route bones → flesh → route flesh); its failure, the GM's retry, and the sweep that reruns
passes whose worker died (docs/tasks.md).

A pass runs in two tasks. The first, on the short queue, resolves the bones into the
outcome everyone is waiting for; then it hands the pass to the streams queue, where the
second streams the character's narrative. So an outcome never waits for a worker thread
that a narrative (seconds to a minute of model output) holds.
"""

import logging

from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction

from lmix.errors import ApplicationError
from lmix.lifecycle import lifecycle_move_all
from lmix.llm.base import LLMError
from lmix.models import LLMModel
from lmix.prepared import Param, Prepared, together
from lmix.realtime.leases import (
    Handover,
    LeasedWork,
    lease_claim,
    lease_claiming,
    lease_hand_over,
    lease_held,
    lease_lapsed,
    lease_sweep,
    lease_take_over,
    leased,
)
from synthesis.frame_events import lock_frame
from synthesis.frame_llm import FrameModels
from synthesis.frame_selectors import seats_load
from synthesis.models import Frame, FrameMode, Seat

from ..enqueue import FLESH as FLESH_TASK
from ..enqueue import MEDIUM_PASS as MEDIUM_TASK
from ..enqueue import (
    flesh_enqueue,
    flesh_key,
    medium_key,
    medium_pass_enqueue,
)
from ..events import notify_pass_failed, notify_window
from ..models import (
    NARRATIVE_TRANSITIONS,
    PASS_TRANSITIONS,
    Narrative,
    NarrativeStatus,
    Outcome,
    Pass,
    PassKind,
    PassStatus,
    Window,
    WindowStatus,
)
from .bones import bones_step, stored_outcome
from .context import FRAME_RELATED, LeaseLost, MediumContext, PassLease, gather
from .flesh import flesh_step, route_flesh

logger = logging.getLogger(__name__)
UNEXPECTED = "Something went wrong in this character's synthesis. Retry it."
# The lease owner of a running pass whose outcome is stored and whose narrative waits for
# a stream worker: no process holds it, so no heartbeat renews it (see `passes_sweep`).
AWAITING_STREAM = "(awaiting a stream worker)"


# The pass a run works on, with what it reads of its frame: nine tables (`medium_pass_read`).
MEDIUM_PASS = Prepared(
    lambda: Pass.objects.select_related(
        "window", "outcome", "narrative", *(f"frame__{x}" for x in FRAME_RELATED)
    ).filter(pk=Param(Pass, "pk"), kind=PassKind.MEDIUM)
)


def medium_pass_read(pass_id: object) -> Pass | None:
    """The medium pass with its window, outcome, narrative and frame (its production's world
    and scenario, its medium model). Prepared (lmix/prepared.py): read twice for every
    outcome (its run and its narrative's), and the ORM takes about twice as long to build
    and run this nine-table join (docs/benchmarks.md, "Stop 31")."""
    return MEDIUM_PASS.one(pk=pass_id)


def _claim_and_read(pass_id: object, owner: str) -> tuple[int, Pass | None]:
    """Claim a per-character frame's pending pass for `owner` (how many rows it moved; a
    shared frame's pass waits its turn: `_claim_shared`), then read it as the claim left it
    (`medium_pass_read`). Sent in one round trip (`together`): every outcome starts here,
    and on this path a round trip costs more than PostgreSQL's answer."""
    claimed, found = together(
        lease_claiming(MEDIUM, pass_id, owner, frame__mode=FrameMode.PER_CHARACTER),
        MEDIUM_PASS.read(pk=pass_id),
    )
    return claimed, found[0] if found else None


def medium_pass_run(*, pass_id: object) -> None:
    """Run a pending medium pass to its outcome, then hand it to a stream worker for its
    character's narrative (`medium_flesh_run`), or finish it when nothing is left to narrate.

    Safe to run twice: only the run that moves the pass from pending to running works, and
    it holds the pass's lease meanwhile. A run after a lost or failed one reuses the
    outcome the pass already has (one outcome and one narrative per pass, whatever
    happens). A provider failure or an invalid answer fails the pass with a readable
    reason, its window too; its liquid stays committed for a retry.
    """
    with lease_held() as owner:
        claimed, pass_ = _claim_and_read(pass_id, owner)
        if pass_ is None:
            return  # gone
        shared = pass_.frame.mode == FrameMode.SHARED  # a frame's mode never changes
        if not claimed and not (
            shared and pass_.status == PassStatus.PENDING and _claim_shared(pass_, owner)
        ):
            return  # running, finished, or a shared frame's turn not come: a duplicate or late task
        lease = PassLease(pass_.pk, owner, pass_.attempts)
        if _guarded(pass_, lease, _bones_run) and shared:
            _hand_over(pass_.frame_id)


def medium_flesh_run(*, pass_id: object) -> None:
    """Stream the narrative of a pass whose outcome `medium_pass_run` stored, on a stream
    worker, and finish the pass. Safe to run twice: only the run that takes the pass from
    `AWAITING_STREAM` works."""
    with lease_held() as owner:
        if not lease_take_over(MEDIUM, pass_id, FLESH, owner):
            return  # taken by another run, or no longer running: a duplicate or late task
        pass_ = medium_pass_read(pass_id)
        if pass_ is None:
            return  # gone
        _guarded(pass_, PassLease(pass_.pk, owner, pass_.attempts), _flesh_run)
        if pass_.frame.mode == FrameMode.SHARED:
            _hand_over(pass_.frame_id)


def _guarded(pass_: Pass, lease: PassLease, step) -> bool:
    """Run one step of the pass; a failure fails the pass with a readable reason.

    Returns:
        Whether this run is done with the pass (False: it handed the pass to a stream worker).
    """
    try:
        return step(pass_, lease)
    except LeaseLost:
        logger.info("medium pass %s is no longer this run's", pass_.pk)
    except (LLMError, ApplicationError) as error:
        _fail(pass_, lease, message=str(error))
    except ObjectDoesNotExist:
        logger.info("medium pass %s lost its frame or seat meanwhile", pass_.pk)
    except Exception:
        logger.exception("medium pass %s failed unexpectedly", pass_.pk)
        _fail(pass_, lease, message=UNEXPECTED)
    return True


def _claim(pass_: Pass, owner: str) -> bool:
    """Pending → running under this run's lease (one statement), if nobody claimed the pass
    since it was read; `pass_` then says so too."""
    if not lease_claim(MEDIUM, pass_.pk, owner, where={"attempts": pass_.attempts}):
        return False
    pass_.refresh_from_db(fields=["status", "lease_owner", "heartbeat_at", "attempts"])
    return True


def _claim_shared(pass_: Pass, owner: str) -> bool:
    """A shared frame runs one pass at a time (each narrates, for everyone, all that was
    committed before it): one that must wait stays pending until the running one hands
    over (`_hand_over`; the sweep is the backstop)."""
    with transaction.atomic():
        lock_frame(pass_.frame_id)
        running = Pass.objects.filter(
            frame_id=pass_.frame_id, kind=PassKind.MEDIUM, status=PassStatus.RUNNING
        )
        return not running.exists() and _claim(pass_, owner)


def _hand_over(frame_id: object) -> None:
    """A shared frame's pass ended: the oldest one waiting runs next."""
    waiting = (
        Pass.objects.filter(frame_id=frame_id, kind=PassKind.MEDIUM, status=PassStatus.PENDING)
        .order_by("created_at", "id")
        .values_list("pk", flat=True)
        .first()
    )
    if waiting is not None:
        _enqueue(waiting)


def _bones_run(pass_: Pass, lease: PassLease) -> bool:
    """The outcome; then the pass goes to a stream worker for its narrative (False), or is
    done when nothing is left to narrate (True)."""
    ctx = gather(pass_, frame=pass_.frame)
    model = medium_model(frame=ctx.frame, seat=ctx.seat)
    ctx, outcome = bones_step(ctx, lease=lease, model=model)
    if not ctx.own and (ctx.shared or (outcome is None and not ctx.interrupt_reason)):
        route_flesh(ctx, None, lease=lease)  # nothing left to resolve or narrate
        return True
    if _held(pass_, ctx, outcome, lease):
        return True
    if not lease_hand_over(MEDIUM, pass_.pk, FLESH, where=lease.where):
        raise LeaseLost()
    pass_id = pass_.pk
    transaction.on_commit(lambda: flesh_enqueue(pass_id))
    return False


def _held(pass_: Pass, ctx: MediumContext, outcome: Outcome | None, lease: PassLease) -> bool:
    """If the outcome the pass would narrate is held (its own, or one that resolved its
    liquid together with another character's: `ctx.resolved_before`), the pass waits,
    held, for its release (`outcome_release`) or its regeneration (`outcome_regenerate`):
    its narrative would tell what the GM has not released. Under the frame's lock, which
    those take too, so a release never misses a pass that is just stopping."""
    seqs = set(ctx.resolved_before.values())
    if outcome is not None and outcome.held:
        seqs.add(outcome.seq)
    if not seqs:
        return False  # an outcome stored unheld is never held later
    with transaction.atomic():
        lock_frame(pass_.frame_id)
        found = {o.seq: o for o in Outcome.objects.filter(frame_id=ctx.frame.pk, seq__in=seqs)}
        if seqs - found.keys():
            # The GM regenerated one since this run gathered: its bones run again.
            if not Pass.move(
                pass_.pk,
                PassStatus.PENDING,
                only_from=(PassStatus.RUNNING,),
                where=lease.where,
                lease_owner="",
                heartbeat_at=None,
            ):
                raise LeaseLost()
            transaction.on_commit(lambda: _enqueue(pass_.pk))
            return True
        held = next((found[seq] for seq in sorted(found) if found[seq].held), None)
        if held is None:
            return False
        if not Pass.move(
            pass_.pk,
            PassStatus.HELD,
            only_from=(PassStatus.RUNNING,),
            where=lease.where,
            waiting_on=held,
            lease_owner="",
            heartbeat_at=None,
        ):
            raise LeaseLost()
    return True


def _flesh_run(pass_: Pass, lease: PassLease) -> bool:
    """The narrative, from the outcome the pass stored (none for an interrupt that found no
    action of its own), then the pass done. It plays on the model its outcome was resolved
    on: a model the GM chose meanwhile is the next pass's."""
    ctx = gather(pass_, frame=pass_.frame, flesh=True)
    played = (
        LLMModel.objects.filter(calls__subject=f"pass:{pass_.pk}", calls__purpose="synthesis.bones")
        .order_by("-calls__id")
        .first()
    )
    model = played or medium_model(frame=ctx.frame, seat=ctx.seat)
    narrative = flesh_step(ctx, stored_outcome(pass_), lease=lease, model=model)
    route_flesh(ctx, narrative, lease=lease)
    return True


def medium_model(*, frame: Frame, seat: Seat) -> LLMModel:
    """The model the seat's pass plays on (synthesis/frame_llm.py): the frame's medium
    model if the GM chose one, else the character's assistant's, else the cast's most
    common, else the GM's default. Read when the pass runs: a change meanwhile is taken by
    the next pass, never by a running one.

    Raises:
        ApplicationError: none of them is set.
    """
    played = FrameModels(frame).medium(seat)
    if played is None:
        raise ApplicationError("This frame has no model for its synthesis: choose one.")
    return played.model


def _fail(pass_: Pass, lease: PassLease, *, message: str) -> None:
    with transaction.atomic():
        lock_frame(pass_.frame_id)
        if not Pass.move(
            pass_.pk,
            PassStatus.FAILED,
            only_from=(PassStatus.RUNNING,),
            where=lease.where,
            error=message,
        ):
            return
        _failed(pass_)


def _failed(pass_: Pass) -> None:
    """What a failed pass leaves: its partial narrative failed, its window failed (the
    liquid in it stays committed and unconsumed), everyone told, the reason only to the
    GM and the character's player."""
    lifecycle_move_all(
        Narrative.objects.filter(source_pass_id=pass_.pk),
        NARRATIVE_TRANSITIONS,
        NarrativeStatus.FAILED,
        only_from=(NarrativeStatus.STREAMING,),
    )
    if pass_.window_id and Window.move(
        pass_.window_id, WindowStatus.FAILED, only_from=(WindowStatus.FIRING,)
    ):
        notify_window("window.failed", Window.objects.get(pk=pass_.window_id))
    pass_.refresh_from_db()
    notify_pass_failed(pass_, seats=seats_load(frame=Frame.objects.get(pk=pass_.frame_id)))


@transaction.atomic
def medium_pass_retry(*, pass_: Pass) -> Pass:
    """The GM retries a failed medium pass: pending again (its window firing again), its
    task enqueued. It reuses the outcome it stored before failing, if any.

    Raises:
        ApplicationError: it is not a medium pass, or it has not failed (409).
    """
    if pass_.kind != PassKind.MEDIUM:
        raise ApplicationError("Only a medium pass can be retried here.")
    lock_frame(pass_.frame_id)
    if not Pass.retry(pass_.pk):
        raise ApplicationError("Only a failed pass can be retried.", status_code=409)
    if pass_.window_id and Window.move(
        pass_.window_id, WindowStatus.FIRING, only_from=(WindowStatus.FAILED,)
    ):
        notify_window("window.fired", Window.objects.get(pk=pass_.window_id))
    pass_.refresh_from_db()
    pass_id = pass_.pk
    transaction.on_commit(lambda: _enqueue(pass_id))
    return pass_


def _enqueue(pass_id: object) -> None:
    medium_pass_enqueue(pass_id)


def _failed_lapsed(pass_: Pass) -> None:
    """A pass failed by the sweep: as any failure, and a shared frame's next pass runs."""
    _failed(pass_)
    frame_id = pass_.frame_id
    if Frame.objects.filter(pk=frame_id, mode=FrameMode.SHARED).exists():
        transaction.on_commit(lambda: _hand_over(frame_id))


# A pass whose outcome is stored waits, running, for a stream worker to take its narrative.
FLESH = Handover(
    owner=AWAITING_STREAM,
    key=flesh_key,
    enqueue=flesh_enqueue,
    task=FLESH_TASK,
    what="(its narrative)",
)
# Medium passes under a lease (lmix/realtime/leases.py): a lapsed one runs again from where
# it stands (an outcome it stored is kept; its narrative starts afresh), or fails once it
# has had its runs.
MEDIUM = leased(
    LeasedWork(
        name="medium pass",
        what="a committed window's outcome (its bones), then each narrative (flesh)",
        model=Pass,
        task=MEDIUM_TASK,
        transitions=PASS_TRANSITIONS,
        scope={"kind": PassKind.MEDIUM},
        pending=PassStatus.PENDING,
        running=PassStatus.RUNNING,
        failed=PassStatus.FAILED,
        key=medium_key,
        enqueue=lambda pass_id: _enqueue(pass_id),
        handovers=(FLESH,),
        load=lambda rows: rows.defer("messages", "tries"),
        fail_message="The worker stopped while running this pass ({attempts} tries). Retry it.",
        before_fail=lambda pass_: lock_frame(pass_.frame_id),
        on_failed=_failed_lapsed,
    )
)


def passes_sweep(
    *, pending_after: float | None = None, lapsed_after: float | None = None
) -> dict[str, int]:
    """The backstop for lost medium passes: enqueue again those whose task (or narrative
    task) was lost — never one still queued — and run again those whose worker stopped
    renewing its lease (or fail them after LMIX_LEASE_MAX_RESTARTS reruns).

    Returns:
        How many passes were re-enqueued, restarted and failed.
    """
    return lease_sweep(MEDIUM, pending_after=pending_after, lapsed_after=lapsed_after)


def pass_lease_lapsed(*, pass_: Pass) -> str | None:
    """Its worker is gone: run the pass again, or fail it (`lease_lapsed`)."""
    return lease_lapsed(MEDIUM, pass_)
