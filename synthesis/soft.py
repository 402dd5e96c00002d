"""The soft pass: a fast analysis of one submitted intention (pscale, window, interruptive,
targets, capable, refined text) by the frame's soft model, validated with pydantic. When
the model fails or answers nonsense, heuristics decide and the liquid says so."""

import logging
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Self

from django.db import transaction
from django.utils import timezone
from pydantic import BaseModel, Field

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError, Message
from lmix.llm.client import llm_structured
from lmix.realtime.leases import LeasedWork, lease_claim, lease_held, lease_sweep, leased
from productions.knowledge import knowledge_text, name_for

from .enqueue import SOFT_PASS, soft_key, soft_pass_enqueue
from .events import notify_liquid
from .frame_events import lock_frame
from .frame_llm import FrameModels
from .frame_selectors import seats_for_prompts
from .models import (
    LIQUID_MAX,
    PASS_TRANSITIONS,
    Frame,
    Liquid,
    LiquidStatus,
    Pass,
    PassKind,
    PassStatus,
    Seat,
)
from .windows import WINDOW_SECONDS

logger = logging.getLogger(__name__)
TEMPLATES = Path(__file__).parent / "templates" / "synthesis"

# Heuristic cues, checked in this order: the first that matches sets the pscale.
_PSCALE_CUES: list[tuple[int, re.Pattern[str]]] = [
    (2, re.compile(r"\b(days?|weeks?|journey|voyage)\b", re.I)),
    (1, re.compile(r"\b(hours?|sleep|rest|travel|study|studies)\b", re.I)),
    (0, re.compile(r"\b(investigate|explore|cook|repair|minutes|wait)\b", re.I)),
    (
        -3,
        re.compile(
            r"\b(strike|stab|shoot|fire|punch|dodge|duck|slap|shove|grab|yell|scream|shout)s?\b",
            re.I,
        ),
    ),
    (
        -2,
        re.compile(r"\b(attack|run|draw|throw|jump|open|close|push|pull|take|give|kick)s?\b", re.I),
    ),
]
_INTERRUPTIVE = re.compile(
    r"\b(attack|strike|stab|shoot|fire|punch|shove|grab|tackle|kick|slap|yell|scream|shout|interrupt|stop)s?\b",
    re.I,
)


@dataclass(frozen=True)
class SoftContext:
    """What the soft prompt holds, for the offline narrator: the intention, and the other
    characters by the names the actor knows them by → their seat ids (`names_known_to`)."""

    content: str
    others: dict[str, str]


class SoftAnalysis(BaseModel):
    """What the soft model answers about one intention."""

    pscale: int = Field(ge=-3, le=2)
    window_seconds: float = Field(gt=0, le=3600)
    interruptive: bool
    targets: list[str] = Field(default_factory=list, max_length=12)
    capable: bool
    capable_reason: str = Field(default="", max_length=500)
    refined: str = Field(min_length=1, max_length=LIQUID_MAX)

    @classmethod
    def offline_answer(cls, context: SoftContext, variant: int = 0) -> Self:
        """The offline narrator's answer: the heuristics, on what the prompt holds."""
        return heuristics(context.content, context.others)


def heuristics(content: str, seats: dict[str, str]) -> SoftAnalysis:
    """A deterministic analysis from the words alone.

    Args:
        content: the intention as written.
        seats: the other characters, name → seat id (a target is a name mentioned).
    """
    pscale = next((scale for scale, cue in _PSCALE_CUES if cue.search(content)), None)
    if pscale is None:
        pscale = -2 if len(content.split()) <= 12 else -1
    targets = [seat_id for name, seat_id in seats.items() if _mentions(content, name)]
    refined = " ".join(content.split())[:LIQUID_MAX] or "…"
    return SoftAnalysis(
        pscale=pscale,
        window_seconds=WINDOW_SECONDS[pscale],
        interruptive=bool(_INTERRUPTIVE.search(content)) and pscale <= -2,
        targets=targets,
        capable=True,
        refined=refined[0].upper() + refined[1:],
    )


def names_known_to(seat_id: object, seats: list[Seat]) -> dict[str, str]:
    """The other characters by the names the acting one knows them by → their seat ids."""
    actor = next(seat for seat in seats if seat.pk == seat_id)
    return {
        name_for(seat.persona, by=actor.persona): str(seat.pk)
        for seat in seats
        if seat.pk != seat_id
    }


def _mentions(content: str, name: str) -> bool:
    parts = [name, *name.split()]
    return any(
        re.search(rf"\b{re.escape(part)}\b", content, re.I) for part in parts if len(part) > 2
    )


@cache
def _template() -> str:
    return (TEMPLATES / "soft.txt").read_text()


def soft_messages(*, frame: Frame, liquid: Liquid, seats: list[Seat]) -> list[Message]:
    """What the soft model is sent: the acting character's own knowledge only, the names of
    the others in the scene, and the intention."""
    actor = next(seat for seat in seats if seat.pk == liquid.seat_id)
    production = frame.production
    knowledge = knowledge_text(
        speaker=actor.persona,
        cast=[seat.persona for seat in seats],
        world=production.world,
        scenario=production.scenario,
    )
    others = "\n".join(
        f"- {name_for(seat.persona, by=actor.persona)}: {seat.pk}"
        for seat in seats
        if seat.pk != actor.pk
    )
    system = _template().format(
        knowledge=knowledge, characters=others or "(nobody else)", name=actor.persona.name
    )
    return [Message("system", system), Message("user", f"ACTION: {liquid.content}")]


def soft_pass_run(*, pass_id: object) -> None:
    """Analyse the liquid of a pending soft pass and store the result on it (unless the
    liquid was edited or withdrawn meanwhile). Safe to run twice: only one run claims it."""
    with lease_held() as owner:
        if not lease_claim(SOFT, pass_id, owner):
            return
        pass_ = Pass.objects.select_related(
            "liquid", "frame__production__world", "frame__production__scenario"
        ).get(pk=pass_id)
        seats = seats_for_prompts(frame=pass_.frame)
        messages = soft_messages(frame=pass_.frame, liquid=pass_.liquid, seats=seats)
        Pass.objects.filter(pk=pass_.pk).update(
            messages=[{"step": "soft", "messages": [m.as_dict() for m in messages]}]
        )
        others = names_known_to(pass_.liquid.seat_id, seats)
        note, failure = "", ""
        tries: list[dict] = []
        try:
            context = SoftContext(pass_.liquid.content, others)
            analysis = _model_analysis(pass_, messages, context=context, tries=tries)
            source = "model"
        except (LLMError, ApplicationError) as error:
            analysis, source = heuristics(pass_.liquid.content, others), "heuristic"
            # Every seat reads the note; the reason can name the model's endpoint, so it
            # goes on the pass, which only the GM reads (with the model's answers).
            note, failure = "The soft model failed; heuristics decided.", str(error)
        soft_result_store(
            pass_=pass_,
            analysis=analysis,
            source=source,
            note=note,
            seats=seats,
            error=failure,
            tries=tries,
        )


# The answer's budget: SoftAnalysis is five short fields, a reason and the intention
# restated in a sentence or two (~150 tokens); a model rambling past this fails to validate
# and the heuristics decide, instead of a slow runaway answer.
SOFT_MAX_TOKENS = 300


def soft_wire(valid_targets: set[str]) -> dict:
    """The soft answer's schema as the call sends it: targets only among this frame's other
    seats, pscale only among the scales (see llm_structured's `wire`)."""
    targets: dict = {"type": "array", "items": {"type": "string"}, "maxItems": 0}
    if valid_targets:
        targets = {
            "type": "array",
            "items": {"type": "string", "enum": sorted(valid_targets)},
            "maxItems": len(valid_targets),
        }
    fields = {
        "pscale": {"type": "integer", "enum": list(range(-3, 3))},
        "window_seconds": {"type": "number"},
        "interruptive": {"type": "boolean"},
        "targets": targets,
        "capable": {"type": "boolean"},
        "capable_reason": {"type": "string"},
        "refined": {"type": "string"},
    }
    return {
        "type": "object",
        "properties": fields,
        "required": list(fields),
        "additionalProperties": False,
    }


def _model_analysis(
    pass_: Pass, messages: list[Message], *, context: SoftContext, tries: list[dict]
) -> SoftAnalysis:
    # The frame's soft model, else the cast's most common, else the GM's default.
    played = FrameModels(pass_.frame).soft()
    if played is None:
        raise ApplicationError("no model is set for soft passes")
    valid_targets = set(context.others.values())
    analysis = llm_structured(
        model=played.model,
        messages=messages,
        schema=SoftAnalysis,
        purpose="synthesis.soft",
        subject=f"pass:{pass_.pk}",
        max_tokens=SOFT_MAX_TOKENS,
        tries=tries,
        wire=soft_wire(valid_targets),
        context=context,
    )
    # Targets must be seats of this frame; anything else the model made up is dropped.
    analysis.targets = [t for t in dict.fromkeys(analysis.targets) if t in valid_targets]
    return analysis


@transaction.atomic
def soft_result_store(
    *,
    pass_: Pass,
    analysis: SoftAnalysis,
    source: str,
    note: str,
    seats: list[Seat],
    error: str = "",
    tries: list[dict] | None = None,
) -> bool:
    """Store an analysis on its liquid and tell the frame; a result for an older revision
    (edited meanwhile) or for withdrawn liquid is dropped. The pass keeps, for the GM, why
    the model failed (`error`) and each of its answers (`tries`). Returns whether it was
    stored."""
    # The frame first, then its liquid: the order outcomes take them in (a liquid row
    # locked before the frame's would deadlock with a pass consuming or interrupting it).
    lock_frame(pass_.frame_id)
    analysed = {
        "pscale": analysis.pscale,
        "window_seconds": analysis.window_seconds,
        "interruptive": analysis.interruptive,
        "targets": analysis.targets,
        "capable": analysis.capable,
        "capable_reason": analysis.capable_reason,
        "refined": analysis.refined,
        "analysis_source": source,
        "analysis_note": note,
        "updated_at": timezone.now(),
    }
    # The liquid as the analysis read it: not edited, withdrawn or consumed since.
    stored = bool(
        Liquid.objects.filter(
            pk=pass_.liquid_id,
            revision=pass_.liquid_revision,
            status__in=[LiquidStatus.SUBMITTED, LiquidStatus.COMMITTED],
        ).update(**analysed)
    )
    Pass.move(
        pass_.pk,
        PassStatus.DONE,
        only_from=(PassStatus.RUNNING,),
        lease_owner="",
        error=error,
        tries=[{"step": "soft", **entry} for entry in tries or ()],
    )
    if stored:
        liquid = Liquid.objects.get(pk=pass_.liquid_id)
        notify_liquid("liquid.analyzed", liquid, frame=pass_.frame, seats=seats)
    return stored


def _decide_lost(pass_: Pass) -> bool:
    """A soft pass whose task was lost or whose worker died: heuristics decide at once (a
    soft pass is a hint, not worth a second model call). Claimed first — from pending by a
    move, from a dead worker's run by its old heartbeat — so it is decided once."""
    if pass_.status == PassStatus.PENDING:
        claimed = SOFT.move(pass_.pk, PassStatus.RUNNING, only_from=(PassStatus.PENDING,))
    else:
        claimed = Pass.objects.filter(
            pk=pass_.pk, status=PassStatus.RUNNING, heartbeat_at=pass_.heartbeat_at
        ).update(heartbeat_at=timezone.now(), lease_owner="")
    if not claimed:
        return False
    seats = seats_for_prompts(frame=pass_.frame)
    others = names_known_to(pass_.liquid.seat_id, seats)
    note = "The soft pass was lost with its worker; heuristics decided."
    analysis = heuristics(pass_.liquid.content, others)
    soft_result_store(pass_=pass_, analysis=analysis, source="heuristic", note=note, seats=seats)
    return True


# Soft passes under a lease (lmix/realtime/leases.py). One whose task was lost (pending
# since it was created) or whose worker died is never run again: heuristics decide.
SOFT = leased(
    LeasedWork(
        name="soft pass",
        what="an intention analysed",
        model=Pass,
        task=SOFT_PASS,
        transitions=PASS_TRANSITIONS,
        scope={"kind": PassKind.SOFT},
        pending=PassStatus.PENDING,
        running=PassStatus.RUNNING,
        failed=PassStatus.FAILED,
        key=soft_key,
        enqueue=soft_pass_enqueue,
        pending_since="created_at",
        counts_runs=False,
        load=lambda rows: rows.select_related("liquid", "frame"),
        settle=_decide_lost,
    )
)


def soft_passes_sweep() -> int:
    """Soft passes whose task was lost or whose worker died, decided by heuristics.
    Returns how many."""
    return lease_sweep(SOFT)["failed"]
