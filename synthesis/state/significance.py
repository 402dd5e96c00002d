"""The significance pass: queued after an outcome's state pass (tasks.py::
significance_pass_task), never on the way to anything, one cheap structured call weighs
the frame's memories nobody has weighed yet, 0 (trivial) to 3 (unforgettable: pinned, at
most services.PINS_MAX per character, the least recent pin let go).

A task of its own rather than a field of the state pass's answer: the state pass already
proposes a significance as it writes each memory, from that one outcome; this one weighs
the memory afterwards, with a short answer (numbers only) that can be retried or skipped
without holding the state back, and it also weighs memories the state pass did not write
(told ones). Once per outcome (its `SignificancePass` row, a job under a lease); an answer that will
not validate is sent back once, then the pass fails with its reason (the GM reads it in the
state drawer). Counted against the frame's model budget as background work."""

import logging
from dataclasses import dataclass
from typing import Any, Self

from django.conf import settings
from django.db import transaction
from pydantic import BaseModel, ConfigDict, Field, field_validator

from lmix.errors import ApplicationError
from lmix.llm.base import LLMError, Message
from lmix.llm.client import llm_structured
from lmix.realtime.leases import lease_claim, lease_held

from ..budget import Work, budget_admits
from ..enqueue import SIGNIFICANCE_PASS, significance_key, significance_pass_send
from ..events import notify_state_changed
from ..medium.context import flat
from ..medium.run import medium_model
from ..models import Outcome
from ..state_models import SIGNIFICANCE_MAX, Memory, SignificancePass
from .run import pass_finish, state_job
from .schema import _whole
from .services import pins_cap

logger = logging.getLogger(__name__)
PURPOSE = "synthesis.significance"
BATCH = 24  # memories weighed by one pass (the oldest unweighed first)
MEMORY_SHOWN = 400
UNEXPECTED = "Something went wrong while weighing the characters' memories."
# What the offline narrator takes for unforgettable: deterministic, by the words.
HEAVY = ("die", "dies", "dead", "death", "kill", "killed", "betray", "love", "secret", "blood")
SYSTEM = (
    "You weigh what characters of a story will remember. For each numbered memory, answer "
    "its significance: 0 trivial, 1 ordinary, 2 notable, 3 unforgettable (rare: a death, a "
    "betrayal, a life-changing moment). Answer only with the requested JSON."
)


class Score(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory: int = Field(description="The memory's number.")
    significance: int = Field(description="0 trivial … 3 unforgettable.")

    _numbers = field_validator("memory", "significance", mode="before")(lambda v: _whole(v))


@dataclass(frozen=True)
class Weighed:
    """What the offline narrator answers from: the memories, numbered from 1."""

    texts: tuple[str, ...]


class SignificanceAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scores: list[Score]

    @classmethod
    def offline_answer(cls, weighed: Weighed, variant: int = 0) -> Self:
        """3 for a memory with a heavy word (a death, a secret…), 1 for a told one, else 2."""

        def weight(text: str) -> int:
            words = set(text.casefold().replace(".", " ").replace(",", " ").split())
            if words & set(HEAVY):
                return 3
            return 1 if " told me: " in text else 2

        return cls(
            scores=[Score(memory=n, significance=weight(t)) for n, t in enumerate(weighed.texts, 1)]
        )


def significance_pass_run(*, outcome_id: object) -> SignificancePass | None:
    """Weigh the frame's unweighed memories after `outcome_id`'s state pass, once.

    Returns:
        Its `SignificancePass` (done or failed), or None: state passes are off, or another
        run has it (or had it).
    """
    if not settings.LMIX_STATE_PASSES:
        return None
    with lease_held() as owner:
        if not lease_claim(SIGNIFICANCE, outcome_id, owner):
            return None
        pass_ = SignificancePass.objects.get(pk=outcome_id)
        outcome = Outcome.objects.select_related("frame__medium_model").get(pk=outcome_id)
        tries: list[dict[str, Any]] = []
        error = ""
        try:
            _run(outcome, tries)
        except (LLMError, ApplicationError) as failure:
            error = flat(str(failure), 2000)
        except Exception:
            logger.exception("the significance pass of outcome %s failed unexpectedly", outcome.pk)
            error = UNEXPECTED
        pass_finish(pass_, tries, error=error)
        return pass_


def _run(outcome: Outcome, tries: list[dict[str, Any]]) -> None:
    memories = list(
        Memory.objects.filter(frame=outcome.frame, scored=False, removed=False)
        .select_related("seat")
        .order_by("created_at", "id")[:BATCH]
    )
    if not memories:
        return
    frame = outcome.frame
    if not budget_admits(frame_id=frame.pk, kind=Work.AI, what=f"significance:{outcome.pk}"):
        raise ApplicationError("The frame's model budget was spent: memories were not weighed.")
    texts = tuple(flat(m.text, MEMORY_SHOWN) for m in memories)
    listed = "\n".join(f"{n}. {text}" for n, text in enumerate(texts, 1))
    answer = llm_structured(
        model=medium_model(frame=frame, seat=memories[0].seat),
        messages=[Message("system", SYSTEM), Message("user", f"MEMORIES\n{listed}")],
        schema=SignificanceAnswer,
        purpose=PURPOSE,
        subject=f"outcome:{outcome.pk}",
        max_tokens=40 + 20 * len(memories),
        tries=tries,
        context=Weighed(texts),
    )
    scores = {s.memory: s.significance for s in answer.scores if 1 <= s.memory <= len(memories)}
    with transaction.atomic():
        for n, memory in enumerate(memories, 1):
            # Only if still unweighed: the GM's edit meanwhile wins.
            update: dict[str, object] = {"scored": True}
            if n in scores:
                significance = max(0, min(SIGNIFICANCE_MAX, scores[n]))
                update |= {"significance": significance, "pinned": significance == SIGNIFICANCE_MAX}
            Memory.objects.filter(pk=memory.pk, scored=False).update(**update)
        seat_ids = sorted({m.seat_id for m in memories}, key=str)
        for seat_id in seat_ids:
            pins_cap(seat_id)
        notify_state_changed(frame.pk, seat_ids)


SIGNIFICANCE = state_job(
    "significance pass",
    SignificancePass,
    SIGNIFICANCE_PASS,
    significance_key,
    significance_pass_send,
    "an outcome's new memories weighed",
)
