"""A frame's model budget: every model call the frame makes (soft passes, bones, flesh, AI
seats' actions, interrupt-woken passes) counts, over a rolling minute, in calls and in
tokens against LMIX_FRAME_MODEL_CALLS_PER_MINUTE and LMIX_FRAME_MODEL_TOKENS_PER_MINUTE
(lmix/llm/meter.py counts; a call finds its frame from its subject, `budget_key_for`).

Work is admitted before it starts, never cut in the middle (a pass stopped between its
bones and its flesh would fail), so a minute can end a little over its limits by the work
already running. Who waits (docs/synthesis.md, "Budgets"):
- background work — an AI seat's action, a pass an interrupt wakes, an AI seat's window —
  is admitted only while the frame has used less than LMIX_FRAME_BACKGROUND_SHARE of
  either limit, so players always keep the rest;
- a player's own work waits only at the full limits; it is never dropped: its window stays
  open past its time and the sweep fires it once the minute frees.
"""

import enum
import logging
import uuid
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from lmix.llm.meter import meter_read

from .models import Outcome, Pass, Scene, Seat, Window, WindowStatus

logger = logging.getLogger(__name__)
# A refusal the sweep repeats every second is logged once per this many seconds.
LOG_EVERY_SECONDS = 10


class Work(enum.StrEnum):
    HUMAN = "human"  # a player's own commit: soft, bones, flesh of its window
    AI = "ai"  # an AI seat's action, or its window
    INTERRUPT = "interrupt"  # a pass an interrupt wakes


def frame_key(frame_id: object) -> str:
    return f"frame:{frame_id}"


@dataclass(frozen=True)
class FrameBudget:
    """A frame's use over the last minute against its limits (a limit of 0: none)."""

    calls: int
    tokens: int
    calls_limit: int
    tokens_limit: int
    rolls_in: float

    def admits(self, kind: Work) -> bool:
        share = 1.0 if kind == Work.HUMAN else settings.LMIX_FRAME_BACKGROUND_SHARE
        return all(
            not limit or used < limit * share
            for used, limit in ((self.calls, self.calls_limit), (self.tokens, self.tokens_limit))
        )


def frame_budget(*, frame_id: object) -> FrameBudget:
    """The frame's use now (one cache read, no query)."""
    used = meter_read(frame_key(frame_id))
    return FrameBudget(
        calls=used.calls,
        tokens=used.tokens,
        calls_limit=settings.LMIX_FRAME_MODEL_CALLS_PER_MINUTE,
        tokens_limit=settings.LMIX_FRAME_MODEL_TOKENS_PER_MINUTE,
        rolls_in=used.rolls_in,
    )


def budget_admits(*, frame_id: object, kind: Work, what: str) -> bool:
    """Whether the frame's budget admits `kind` of work now; a refusal is logged as a
    warning (frame, kind, what, counts), once per LOG_EVERY_SECONDS for the same frame and
    kind, as the sweep asks again every second."""
    budget = frame_budget(frame_id=frame_id)
    if budget.admits(kind):
        return True
    try:
        fresh = cache.add(f"budget-refused:{frame_id}:{kind}", 1, timeout=LOG_EVERY_SECONDS)
    except Exception:
        fresh = True
    if fresh:
        logger.warning(
            "frame %s: model budget refuses %s work (%s): %d/%d calls, %d/%d tokens this minute",
            frame_id,
            kind,
            what,
            budget.calls,
            budget.calls_limit,
            budget.tokens,
            budget.tokens_limit,
            extra={
                "frame": str(frame_id),
                "kind": str(kind),
                "what": what,
                "calls": budget.calls,
                "calls_limit": budget.calls_limit,
                "tokens": budget.tokens,
                "tokens_limit": budget.tokens_limit,
            },
        )
    return False


def window_work(window: Window) -> Work:
    """What kind of work firing `window` starts (its seat loaded with it)."""
    if window.trigger == "interrupt":
        return Work.INTERRUPT
    if window.seat.controller == "ai":
        return Work.AI
    return Work.HUMAN


@lru_cache(maxsize=4096)
def budget_key_for(subject: str) -> str | None:
    """LMIX_LLM_BUDGET_KEY: the budget a model call on `subject` counts against — a frame's
    pass ("pass:<id>"), AI seat ("seat:<id>"), outcome's state pass ("outcome:<id>") or
    scene's summaries ("scene:<id>") counts against its frame's. One primary-key
    read, once per subject per process (a pass makes several calls; its frame never
    changes)."""
    kind, _, pk = subject.partition(":")
    try:
        pk = uuid.UUID(pk)
    except ValueError:
        return None
    model = {"pass": Pass, "seat": Seat, "outcome": Outcome, "scene": Scene}.get(kind)
    if model is None:
        return None
    frame_id = model.objects.filter(pk=pk).values_list("frame_id", flat=True).first()
    return frame_key(frame_id) if frame_id else None


def budget_view(*, frame_id: object) -> dict[str, Any]:
    """The GM's view of the frame's budget: this minute's calls and tokens against the
    limits, whether AI seats and interrupts are paused, and how many windows wait past
    their time for the budget to free."""
    budget = frame_budget(frame_id=frame_id)
    waiting = Window.objects.filter(
        frame_id=frame_id, status=WindowStatus.OPEN, expires_at__lte=timezone.now()
    ).count()
    return {
        "calls": budget.calls,
        "calls_limit": budget.calls_limit,
        "tokens": budget.tokens,
        "tokens_limit": budget.tokens_limit,
        "ai_paused": not budget.admits(Work.AI),
        "players_paused": not budget.admits(Work.HUMAN),
        "waiting_windows": waiting,
        "rolls_in": round(budget.rolls_in),
    }
