"""Epilogues: when the GM closes a scene "with an epilogue", each player's character gets a
closing narrative written from its own point of view, with only what it may know (its
compiled knowledge, its own narratives, the outcomes it witnessed: the flesh pass's context,
synthesis/medium/context.py); a shared frame gets one epilogue everyone reads, from public
knowledge only. Each is a pass of kind `epilogue` (failure, the GM's retry, leases, the
sweep and the frame's model budget work as for any pass) whose narrative has the trigger
`epilogue`, so the story so far and the export hold it like any other narrative.
"""

import logging
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db import transaction

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError, LLMInvalidOutput, Message
from lmix.llm.client import llm_complete
from lmix.llm.echo import PromptEcho
from lmix.llm.offline import Epilogue
from lmix.models import LLMModel
from lmix.realtime.leases import LeasedWork, lease_claim, lease_held, lease_sweep, leased

from .budget import Work, budget_admits
from .enqueue import EPILOGUE as EPILOGUE_TASK
from .enqueue import epilogue_enqueue, epilogue_key
from .frame_events import lock_frame
from .frame_selectors import FrameAccess
from .liquid import frame_status_set
from .medium.bones import record_messages
from .medium.context import FRAME_RELATED, LeaseLost, MediumContext, PassLease, flat, gather
from .medium.flesh import ECHO_TAKES, whole_sentences
from .medium.prompts import fit_messages, outcome_lines, public_setting, template
from .medium.run import medium_model
from .models import (
    PASS_TRANSITIONS,
    Frame,
    FrameMode,
    FrameStatus,
    Narrative,
    NarrativeStatus,
    Pass,
    PassKind,
    PassStatus,
    Seat,
    SeatController,
    Skill,
    Trigger,
)
from .scenes.services import scene_end
from .skills.prompting import seat_skills, skill_refs, skills_section

logger = logging.getLogger(__name__)
EPILOGUE_WORDS = 200  # about a minute's reading: a closing, not another chapter
UNEXPECTED = "Something went wrong while writing this epilogue. Retry it."


@transaction.atomic
def frame_close(*, frame: Frame, epilogue: bool = False) -> Frame:
    """The GM closes the scene for good (`frame_status_set`); with `epilogue`, once that
    commits, an epilogue is written for each seat a player holds (one for everyone in a
    shared frame) in the background.

    Raises:
        ApplicationError: the frame is already closed (409).
    """
    scene_end(frame=frame)  # its last scene closes too, summarised (before `frame.closed`)
    frame = frame_status_set(frame=frame, status=FrameStatus.CLOSED)
    if epilogue:
        epilogues_start(frame=frame)
    return frame


def epilogues_start(*, frame: Frame) -> list[Pass]:
    """The epilogue passes of a frame just closed (in its transaction), enqueued after it
    commits: one per seat a player holds, or one on the first seat of a shared frame (its
    narrative is shared: everyone reads it)."""
    seats = list(Seat.objects.filter(frame=frame).order_by("position", "id"))
    if frame.mode == FrameMode.SHARED:
        chosen = seats[:1]
    else:
        chosen = [seat for seat in seats if seat.controller == SeatController.HUMAN]
    passes = [
        Pass.objects.create(
            frame=frame, seat=seat, kind=PassKind.EPILOGUE, trigger=Trigger.EPILOGUE
        )
        for seat in chosen
    ]
    for pass_ in passes:
        transaction.on_commit(lambda pk=pass_.pk: epilogue_enqueue(pk))
    return passes


def epilogue_run(*, pass_id: object) -> None:
    """Write a pending epilogue. Safe to run twice: only the run that claims the pass
    works. Over the frame's model budget it stays pending, and the sweep enqueues it
    again later (a closed frame spends nothing else). A provider failure fails the pass
    with a readable reason, for the GM to retry."""
    pass_ = Pass.objects.filter(pk=pass_id, kind=PassKind.EPILOGUE).first()
    if pass_ is None or pass_.status != PassStatus.PENDING:
        return  # gone, running or finished: a duplicate or late task
    # Its calls count like any pass's (subject "pass:<id>"). It waits only at the full
    # limits: the scene is closed, so no player's work is left to keep a share for.
    if not budget_admits(frame_id=pass_.frame_id, kind=Work.HUMAN, what=f"epilogue:{pass_.pk}"):
        return  # its task's mark is gone: the sweep enqueues it again in a while
    with lease_held() as owner:
        if not lease_claim(EPILOGUE, pass_.pk, owner, where={"attempts": pass_.attempts}):
            return
        pass_.refresh_from_db()
        lease = PassLease(pass_.pk, owner, pass_.attempts)
        try:
            _write(pass_, lease)
        except LeaseLost:
            logger.info("epilogue %s is no longer this run's", pass_.pk)
        except (LLMError, ApplicationError) as error:
            _fail(pass_, lease, message=str(error))
        except ObjectDoesNotExist:
            logger.info("epilogue %s lost its frame or seat meanwhile", pass_.pk)
        except Exception:
            logger.exception("epilogue %s failed unexpectedly", pass_.pk)
            _fail(pass_, lease, message=UNEXPECTED)


def _write(pass_: Pass, lease: PassLease) -> None:
    """Gather what the character may know, compile, call, store the narrative done."""
    frame = Frame.objects.select_related(*FRAME_RELATED).get(pk=pass_.frame_id)
    ctx = gather(pass_, frame=frame)
    model = medium_model(frame=frame, seat=ctx.seat)
    told = epilogue_told(ctx)
    skills = epilogue_skills(ctx)
    messages = compile_epilogue(ctx, model, told=told, skills=skills)
    record_messages(pass_, lease, "epilogue", messages, skill_refs(skills))
    echo = PromptEcho.of(messages, quoted=[n.text for n in ctx.recent])
    text = whole_sentences(_epilogue_text(pass_, model, messages, told=told, echo=echo))
    with transaction.atomic():
        lock_frame(frame.pk)
        if not Pass.move(
            pass_.pk, PassStatus.DONE, only_from=(PassStatus.RUNNING,), where=lease.where
        ):
            raise LeaseLost()
        Narrative.objects.create(
            frame=frame,
            seat=ctx.seat,
            user_id=None if ctx.shared else ctx.seat.user_id,
            shared=ctx.shared,
            source_pass=pass_,
            text=text,
            outcome_ids=[str(o.pk) for o in ctx.outcomes],
            trigger=Trigger.EPILOGUE,
            pscale=ctx.pscale,
            status=NarrativeStatus.DONE,
        )


def _epilogue_text(
    pass_: Pass, model: LLMModel, messages: list[Message], *, told: Epilogue, echo: PromptEcho
) -> str:
    """The epilogue the model writes. One that echoes its prompt (`echo`: lmix/llm/echo.py)
    is a failed answer: asked for once more, then the pass fails (never stored done).

    Raises:
        LLMError: the provider failed, or the epilogue echoed its prompt twice.
    """
    why = ""
    for _ in range(ECHO_TAKES):
        answer = llm_complete(
            model=model,
            messages=messages,
            purpose="synthesis.epilogue",
            subject=f"pass:{pass_.pk}",
            overrides={"max_tokens": EPILOGUE_WORDS * 2},
            context=told,
        )
        text = answer.text.strip()
        why = echo.why(text) or ""
        if not why:
            return text
        logger.info("epilogue %s echoed its prompt (%s)", pass_.pk, why)
    raise LLMInvalidOutput(
        f"The model repeated its prompt instead of writing the epilogue ({ECHO_TAKES} "
        f"tries; the last: {why}). Retry it, or give this character another model."
    )


def epilogue_told(ctx: MediumContext) -> Epilogue:
    """What the epilogue looks back on, for the offline narrator: the first sentence of
    each of the character's own recent narratives (the scene's, in a shared frame) and the
    facts of the outcomes it witnessed since."""
    memories = tuple(flat(n.text, 300).split(". ")[0] for n in ctx.recent if n.text.strip())
    facts = tuple(flat(fact) for o in ctx.outcomes for fact in o.world_facts)
    label = "The scene" if ctx.shared else ctx.label
    return Epilogue(character=label, memories=memories, facts=facts, words=EPILOGUE_WORDS)


def epilogue_skills(ctx: MediumContext) -> list[Skill]:
    """The player face's skills that shape an epilogue, as a narrative's: the platform's,
    the frame's and the seat's player's own; a shared frame's, which everyone reads, no
    player's."""
    user_id = None if ctx.shared else ctx.seat.user_id
    return seat_skills(frame_id=ctx.frame.pk, user_id=user_id, step="epilogue")


def compile_epilogue(
    ctx: MediumContext, model: LLMModel, *, told: Epilogue, skills: Sequence[Skill] = ()
) -> list[Message]:
    """The epilogue call's messages: the flesh prompt's knowledge (the character's own, or
    in a shared frame the public one), the skills that shape it, its own story and what it
    witnessed since."""
    if ctx.shared:
        system, user = template("epilogue_shared.txt")
        system = system.format(**public_setting(ctx), words=told.words)
    else:
        system, user = template("epilogue.txt")
        system = system.format(knowledge=ctx.knowledge, name=ctx.label, words=told.words)
    if shaped := skills_section(list(skills)):
        system = f"{system}\n\n{shaped}"
    return fit_messages(
        system,
        user,
        fixed={"name": ctx.label},
        parts={
            "recent": [flat(n.text, 8000) for n in ctx.recent],
            "outcomes": [outcome_lines(o, ctx.labels) for o in ctx.outcomes],
        },
        drop_order=("recent", "outcomes"),
        model=model,
        reply=told.words * 2,
    )


def _fail(pass_: Pass, lease: PassLease, *, message: str) -> None:
    with transaction.atomic():
        lock_frame(pass_.frame_id)
        Pass.move(
            pass_.pk,
            PassStatus.FAILED,
            only_from=(PassStatus.RUNNING,),
            where=lease.where,
            error=message,
        )


@transaction.atomic
def epilogue_retry(*, pass_: Pass) -> Pass:
    """The GM retries a failed epilogue: pending again, its task enqueued.

    Raises:
        ApplicationError: it has not failed (409).
    """
    lock_frame(pass_.frame_id)
    if not Pass.retry(pass_.pk):
        raise ApplicationError("Only a failed epilogue can be retried.", status_code=409)
    pass_.refresh_from_db()
    pass_id = pass_.pk
    transaction.on_commit(lambda: epilogue_enqueue(pass_id))
    return pass_


# Epilogue passes under a lease (lmix/realtime/leases.py): one whose worker died is written
# again, or fails once it has had its runs; one whose task was lost is enqueued again.
EPILOGUE = leased(
    LeasedWork(
        name="epilogue",
        what="a closed scene's epilogue for a seat (or everyone)",
        model=Pass,
        task=EPILOGUE_TASK,
        transitions=PASS_TRANSITIONS,
        scope={"kind": PassKind.EPILOGUE},
        pending=PassStatus.PENDING,
        running=PassStatus.RUNNING,
        failed=PassStatus.FAILED,
        key=epilogue_key,
        enqueue=lambda pass_id: epilogue_enqueue(pass_id),
        load=lambda rows: rows.defer("messages", "tries"),
        fail_message="The worker stopped while writing this epilogue ({attempts} tries). Retry it.",
        before_fail=lambda pass_: lock_frame(pass_.frame_id),
    )
)


def epilogues_sweep(
    *, pending_after: float | None = None, lapsed_after: float | None = None
) -> dict[str, int]:
    """The backstop for epilogues whose task was lost (or that the budget held back) or
    whose worker died (`lease_sweep`)."""
    return lease_sweep(EPILOGUE, pending_after=pending_after, lapsed_after=lapsed_after)


def epilogue_view(access: FrameAccess) -> dict[str, Any]:
    """GET /api/frames/{id}/epilogue: the epilogues this reader may read — the GM's every
    one, a player's their own seats' (a shared frame's one is everyone's) — each with
    where its writing stands, and the whole: `none` (the scene closed without one, or is
    still open), `writing`, `failed` (any of them; the GM may retry it) or `done`. Why one
    failed is the GM's alone: a provider's error may name its endpoint."""
    shared = access.frame.mode == FrameMode.SHARED
    passes = Pass.objects.filter(frame=access.frame, kind=PassKind.EPILOGUE)
    if not access.is_gm and not shared:
        passes = passes.filter(seat_id__in=access.seat_ids)
    passes = list(passes.select_related("seat__persona").order_by("seat__position", "created_at"))
    narratives = {
        n.source_pass_id: n
        for n in Narrative.objects.filter(source_pass__in=passes, status=NarrativeStatus.DONE)
    }
    return {
        "status": _overall([p.status for p in passes]),
        "epilogues": [
            _body(p, narratives.get(p.pk), shared=shared, gm=access.is_gm) for p in passes
        ],
    }


def _body(pass_: Pass, narrative: Narrative | None, *, shared: bool, gm: bool) -> dict[str, Any]:
    return {
        "id": str(pass_.pk),
        "seat": str(pass_.seat_id),
        # Its reader knows the name: the GM knows all, a player their own character's.
        "character": "The scene" if shared else pass_.seat.persona.name,
        "status": pass_.status,
        "text": narrative.text if narrative else "",
        "narrative": str(narrative.pk) if narrative else None,
        "error": pass_.error if gm else "",
    }


def _overall(statuses: list[str]) -> str:
    if not statuses:
        return "none"
    if PassStatus.FAILED in statuses:
        return "failed"
    if PassStatus.PENDING in statuses or PassStatus.RUNNING in statuses:
        return "writing"
    return "done"
