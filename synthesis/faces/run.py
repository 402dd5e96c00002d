"""The author and designer passes: an author's or designer's liquid, committed, is made
into a content entry or a frame skill by one structured call, at once (no window, no
pscale). Each is a `Pass` of kind `author` or `designer`, so failure, the GM's retry,
leases, the sweep and the frame's model budget work as for any pass (as epilogues do,
synthesis/epilogue.py). The liquid goes submitted → committed → consumed; while its pass
waits or has failed it stays committed, its `result` saying which pass and why it failed.
"""

import logging
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction
from django.utils import timezone

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError, LLMInvalidOutput, Message
from lmix.llm.client import llm_structured
from lmix.models import LLMModel
from lmix.realtime.leases import LeasedWork, lease_claim, lease_held, lease_sweep, leased

from ..budget import Work, budget_admits
from ..enqueue import FACE_PASS, face_pass_enqueue, face_pass_key
from ..events import notify_liquid
from ..frame_events import lock_frame
from ..frame_llm import FrameModels
from ..models import (
    PASS_TRANSITIONS,
    Face,
    Frame,
    FrameStatus,
    Liquid,
    LiquidStatus,
    Pass,
    PassKind,
    PassStatus,
    Trigger,
)
from .prompts import compile_author, compile_designer, content_lines
from .schemas import AuthorEntry, AuthorTold, DesignerSkill, DesignerTold
from .store import author_store, designer_store

logger = logging.getLogger(__name__)
FACE_PASS_KINDS = (PassKind.AUTHOR, PassKind.DESIGNER)
UNEXPECTED = "Something went wrong while reading this writing. The GM can retry it."
# What the writer reads when the provider failed: its error may name the model's endpoint,
# which is the GM's (the passes list and the GM's copy of the liquid keep it).
PROVIDER_FAILED = "The storyteller could not read this writing just now; the GM can retry it."
LAPSED = "The storyteller stopped while reading this writing; the GM can retry it."
REFUSED = "The storyteller's answer did not fit ({why}); the GM can retry it."


class _LeaseLost(Exception):
    """The run no longer holds its pass: it writes nothing more."""


def face_commit(*, liquid: Liquid) -> Liquid:
    """Commit an author's or designer's liquid (locked and submitted, in its transaction):
    committed at once, its pass created and, once this commits, run.

    Raises:
        ApplicationError: the frame has no model for the pass (400), said before anything
            waits for it.
    """
    kind = PassKind.AUTHOR if liquid.face == Face.AUTHOR else PassKind.DESIGNER
    face_model(liquid.frame)
    pass_ = Pass.objects.create(
        frame_id=liquid.frame_id,
        seat_id=liquid.seat_id,
        kind=kind,
        trigger=Trigger.COMMIT,
        liquid=liquid,
        liquid_revision=liquid.revision,
    )
    now = timezone.now()
    Liquid.move(
        liquid.pk,
        LiquidStatus.COMMITTED,
        only_from=(LiquidStatus.SUBMITTED,),
        committed_at=now,
        updated_at=now,
        result={"pass": str(pass_.pk)},
    )
    liquid.refresh_from_db()
    notify_liquid("liquid.committed", liquid, frame=liquid.frame)
    transaction.on_commit(lambda: face_pass_enqueue(pass_.pk))
    return liquid


def face_model(frame: Frame) -> LLMModel:
    """The frame's medium model if the GM chose one, else the cast's most common, else the
    GM's default (frame_llm.py's rule, without a seat).

    Raises:
        ApplicationError: none is set.
    """
    played = FrameModels(frame).medium_unseated()
    if played is None:
        raise ApplicationError("This frame has no model for its synthesis: choose one.")
    return played.model


def face_pass_run(*, pass_id: object) -> None:
    """Run a pending author or designer pass. Safe to run twice: only the run that claims
    it works. Over the frame's budget it stays pending for the sweep. A provider failure, an
    answer that will not validate or a refused skill fails it readably, for the GM to
    retry."""
    pass_ = Pass.objects.filter(pk=pass_id, kind__in=FACE_PASS_KINDS).first()
    if pass_ is None or pass_.status != PassStatus.PENDING:
        return
    if not budget_admits(frame_id=pass_.frame_id, kind=Work.HUMAN, what=f"{pass_.kind}:{pass_.pk}"):
        return
    with lease_held() as owner:
        if not lease_claim(FACES, pass_.pk, owner, where={"attempts": pass_.attempts}):
            return
        pass_.refresh_from_db()
        where = {"lease_owner": owner, "attempts": pass_.attempts}
        try:
            _run(pass_, where)
        except _LeaseLost:
            logger.info("%s pass %s is no longer this run's", pass_.kind, pass_.pk)
        except LLMInvalidOutput as error:
            _fail(pass_, where, error=str(error), told=REFUSED.format(why=_short(error)))
        except LLMError as error:
            _fail(pass_, where, error=str(error), told=PROVIDER_FAILED)
        except ApplicationError as error:  # refused by the server: the writer reads why
            _fail(pass_, where, error=str(error), told=str(error))
        except ObjectDoesNotExist:
            logger.info("%s pass %s lost its liquid meanwhile", pass_.kind, pass_.pk)
        except Exception:
            logger.exception("%s pass %s failed unexpectedly", pass_.kind, pass_.pk)
            _fail(pass_, where, error=UNEXPECTED, told=UNEXPECTED)


def _short(error: Exception) -> str:
    return str(error).splitlines()[-1][:200] if str(error) else "no answer"


def _run(pass_: Pass, where: dict[str, Any]) -> None:
    """Compile, call, validate, store, consume the liquid."""
    liquid = Liquid.objects.select_related("frame__production__world", "author").get(
        pk=pass_.liquid_id
    )
    frame = liquid.frame
    if liquid.status != LiquidStatus.COMMITTED:  # nothing left to make: the pass is over
        Pass.move(pass_.pk, PassStatus.DONE, only_from=(PassStatus.RUNNING,), where=where)
        return
    if frame.status == FrameStatus.CLOSED:
        raise ApplicationError("This frame was closed before this writing could be added.")
    model = face_model(frame)
    tries: list[dict[str, Any]] = []
    if pass_.kind == PassKind.AUTHOR:
        content = content_lines(frame)
        messages = compile_author(liquid, frame, content)
        _record(pass_, where, messages=messages)
        told: object = AuthorTold(liquid.content, tuple((t, n) for t, n, _ in content))
        schema: type[AuthorEntry] | type[DesignerSkill] = AuthorEntry
    else:
        messages = compile_designer(liquid, frame)
        _record(pass_, where, messages=messages)
        told, schema = DesignerTold(liquid.content), DesignerSkill
    try:
        answer = llm_structured(
            model=model,
            messages=messages,
            schema=schema,
            purpose=f"synthesis.{pass_.kind}",
            subject=f"pass:{pass_.pk}",
            tries=tries,
            context=told,
        )
    finally:
        _record(pass_, where, tries=tries)
    with transaction.atomic():
        lock_frame(frame.pk)
        if not Pass.move(pass_.pk, PassStatus.DONE, only_from=(PassStatus.RUNNING,), where=where):
            raise _LeaseLost()
        liquid = Liquid.objects.select_for_update(of=("self",)).get(pk=liquid.pk)
        if liquid.status != LiquidStatus.COMMITTED:
            raise _LeaseLost()
        if isinstance(answer, AuthorEntry):
            made = author_store(liquid, answer)
        else:
            made = designer_store(liquid, answer)
        _consume(liquid, {"pass": str(pass_.pk), **made})


def _consume(liquid: Liquid, result: dict[str, Any]) -> None:
    Liquid.move(
        liquid.pk, LiquidStatus.CONSUMED, only_from=(LiquidStatus.COMMITTED,), result=result
    )
    liquid.refresh_from_db()
    notify_liquid("liquid.consumed", liquid, frame=liquid.frame)


def _record(
    pass_: Pass,
    where: dict[str, Any],
    *,
    messages: list[Message] | None = None,
    tries: list[dict] | None = None,
) -> None:
    """Keep what was sent and every try on the pass, for the GM (as the medium pass does)."""
    changes: dict[str, Any] = {}
    if messages is not None:
        entry = {
            "step": pass_.kind,
            "attempt": pass_.attempts,
            "messages": [m.as_dict() for m in messages],
        }
        pass_.messages = changes["messages"] = [*pass_.messages, entry]
    if tries:
        entries = [{"step": pass_.kind, "attempt": pass_.attempts, **one} for one in tries]
        pass_.tries = changes["tries"] = [*pass_.tries, *entries]
    if changes and not Pass.objects.filter(pk=pass_.pk, status=PassStatus.RUNNING, **where).update(
        **changes
    ):
        raise _LeaseLost()


def _fail(pass_: Pass, where: dict[str, Any], *, error: str, told: str) -> None:
    """The pass failed: the GM reads `error`, the writer `told`; the liquid stays committed
    for a retry."""
    with transaction.atomic():
        lock_frame(pass_.frame_id)
        if not Pass.move(
            pass_.pk, PassStatus.FAILED, only_from=(PassStatus.RUNNING,), where=where, error=error
        ):
            return
        _liquid_failed(pass_, told)


def _liquid_failed(pass_: Pass, told: str) -> None:
    liquid = Liquid.objects.select_related("frame").filter(pk=pass_.liquid_id).first()
    if liquid is None or liquid.status != LiquidStatus.COMMITTED:
        return
    liquid.result = {"pass": str(pass_.pk), "error": told}
    liquid.save(update_fields=["result", "updated_at"])
    notify_liquid("liquid.failed", liquid, frame=liquid.frame)


@transaction.atomic
def face_pass_retry(*, pass_: Pass) -> Pass:
    """The GM runs a failed author or designer pass again: pending, its liquid's error
    cleared (`liquid.committed` again), its task enqueued.

    Raises:
        ApplicationError: it has not failed (409).
    """
    lock_frame(pass_.frame_id)
    if not Pass.retry(pass_.pk):
        raise ApplicationError("Only a failed pass can be retried.", status_code=409)
    pass_.refresh_from_db()
    liquid = Liquid.objects.select_related("frame").filter(pk=pass_.liquid_id).first()
    if liquid is not None and liquid.status == LiquidStatus.COMMITTED:
        liquid.result = {"pass": str(pass_.pk)}
        liquid.save(update_fields=["result", "updated_at"])
        notify_liquid("liquid.committed", liquid, frame=liquid.frame)
    pass_id = pass_.pk
    transaction.on_commit(lambda: face_pass_enqueue(pass_id))
    return pass_


# Author and designer passes under a lease (lmix/realtime/leases.py): one whose worker
# died runs again, or fails once it has had its runs; one whose task was lost is enqueued
# again.
FACES = leased(
    LeasedWork(
        name="faces",
        what="an author's or designer's writing read into content or a skill",
        model=Pass,
        task=FACE_PASS,
        transitions=PASS_TRANSITIONS,
        scope={"kind__in": FACE_PASS_KINDS},
        pending=PassStatus.PENDING,
        running=PassStatus.RUNNING,
        failed=PassStatus.FAILED,
        key=face_pass_key,
        enqueue=lambda pass_id: face_pass_enqueue(pass_id),
        load=lambda rows: rows.defer("messages", "tries"),
        fail_message="The worker stopped while reading this writing ({attempts} tries). Retry it.",
        before_fail=lambda pass_: lock_frame(pass_.frame_id),
        on_failed=lambda pass_: _liquid_failed(pass_, LAPSED),
    )
)


def faces_sweep(
    *, pending_after: float | None = None, lapsed_after: float | None = None
) -> dict[str, int]:
    """The backstop for author and designer passes whose task was lost (or that the budget
    held back) or whose worker died."""
    return lease_sweep(FACES, pending_after=pending_after, lapsed_after=lapsed_after)
