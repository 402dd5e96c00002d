"""Regenerate: the GM runs an outcome's pass again, its inputs edited or not (docs/synthesis.md,
"Rewind and regenerate"), and the one door for "regenerate any pass". A held outcome nobody
read is thrown away and rerun as before (synthesis/outcomes.py); any other outcome is
rewound first (it and everything after it hidden by a `Rewind` of kind `regenerate`,
restorable), then the intentions it resolved are committed anew — as they were, or as the
GM rewrote them (recorded on the rewind: who, when, before, after) — and the acting
character's window fires now."""

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from lmix.errors import ApplicationError

from .epilogue import epilogue_retry
from .events import notify_liquid
from .faces.run import FACE_PASS_KINDS, face_pass_retry
from .medium import medium_pass_retry
from .medium.context import flat
from .models import (
    LIQUID_MAX,
    Face,
    FrameStatus,
    Liquid,
    LiquidStatus,
    Outcome,
    Pass,
    PassKind,
    PassStatus,
    Window,
    WindowStatus,
)
from .outcomes import outcome_regenerate
from .rewind import frame_lock_open, preview_body, rewind_plan, rewind_record, scenes_counts
from .rewind_models import RewindKind
from .windows import window_fire, window_for_commit

# What a copy of a resolved intention keeps of the soft pass's analysis of the original.
_ANALYSIS = (
    "pscale",
    "window_seconds",
    "interruptive",
    "targets",
    "capable",
    "capable_reason",
    "refined",
    "analysis_source",
    "analysis_note",
)


def _edits(outcome: Outcome, inputs: list[dict[str, Any]]) -> dict[str, str]:
    """The GM's rewritten intentions, liquid id → text, each one the outcome resolved.

    Raises:
        ApplicationError: an intention it did not resolve, or an empty or too long text (400).
    """
    resolved = {str(x) for x in outcome.liquid_ids}
    edits: dict[str, str] = {}
    problems: list[str] = []
    for entry in inputs:
        liquid, text = str(entry.get("liquid", "")), flat(entry.get("content", ""), LIQUID_MAX + 1)
        if liquid not in resolved:
            problems.append(f"{liquid or '(none)'} is not an intention this outcome resolved.")
        elif not text:
            problems.append("An intention's text is empty.")
        elif len(text) > LIQUID_MAX:
            problems.append(f"Keep each intention under {LIQUID_MAX} characters.")
        else:
            edits[liquid] = text
    if problems:
        raise ApplicationError("Check the edited intentions.", details={"inputs": problems})
    return edits


def regenerate_preview(*, outcome: Outcome) -> dict[str, Any]:
    """The dry run of regenerating `outcome`: what goes with it (a `RewindPreview`) and
    the intentions it resolved, for the GM to rewrite (`inputs`)."""
    plan = rewind_plan(frame=outcome.frame, to_seq=outcome.seq - 1)
    body = preview_body(plan, to_seq=outcome.seq - 1)
    body["counts"].update(scenes_counts(frame=outcome.frame, to_seq=outcome.seq - 1))
    originals = Liquid.objects.filter(pk__in=outcome.liquid_ids, face=Face.PLAYER).order_by(
        "committed_at", "seat_id"
    )
    body["inputs"] = [
        {"liquid": str(x.pk), "seat": str(x.seat_id), "content": x.content} for x in originals
    ]
    return body


@transaction.atomic
def outcome_regenerate_any(
    *, outcome: Outcome, user: AbstractBaseUser, inputs: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The GM regenerates an outcome, the latest or any: see the module's docstring.

    Returns:
        `{"rewind": id or None, "passes": [Pass]}`: the rewind that hid the old outcome
        (None for a held one thrown away) and the passes that run now.
    Raises:
        ApplicationError: the scene is closed, the outcome is the GM's own narration or
            resolved no intention (409), an edit is refused (400), no such outcome (404).
    """
    frame = frame_lock_open(outcome.frame)
    outcome = Outcome.objects.filter(pk=outcome.pk).first()
    if outcome is None:
        raise ApplicationError("No such outcome.", status_code=404)
    if outcome.held and not inputs:
        return {"rewind": None, "passes": outcome_regenerate(outcome=outcome)}
    if outcome.seat_id is None:
        raise ApplicationError("This is the GM's own narration: edit it instead.", status_code=409)
    edits = _edits(outcome, inputs or [])
    originals = list(
        Liquid.objects.filter(pk__in=outcome.liquid_ids, face=Face.PLAYER).order_by(
            "committed_at", "seat_id"
        )
    )
    if not originals:
        raise ApplicationError(
            "This outcome resolved no intention: rewind to the one before it instead.",
            status_code=409,
        )
    previous = Outcome.objects.filter(frame=frame, seq__lt=outcome.seq).order_by("-seq").first()
    rewind = rewind_record(
        frame=frame,
        to_seq=outcome.seq - 1,
        user=user,
        kind=RewindKind.REGENERATE,
        to_outcome=previous,
        edits=[
            {
                "liquid": str(x.pk),
                "seat": str(x.seat_id),
                "before": x.content,
                "after": edits[str(x.pk)],
            }
            for x in originals
            if str(x.pk) in edits and edits[str(x.pk)] != x.content
        ],
    )
    windows = [_commit_again(x, edits.get(str(x.pk), x.content)) for x in originals]
    passes = [_fire(w) for w in windows if w.seat_id == outcome.seat_id]
    return {"rewind": rewind.pk, "passes": [p for p in passes if p is not None]}


def _commit_again(original: Liquid, content: str) -> Window:
    """A copy of a resolved intention, committed again in its character's window (the
    original stays with the rewind that hid it)."""
    now = timezone.now()
    copy = Liquid.objects.create(
        frame_id=original.frame_id,
        seat_id=original.seat_id,
        author_id=original.author_id,
        face=Face.PLAYER,
        content=content,
        status=LiquidStatus.COMMITTED,
        committed_at=now,
        **{name: getattr(original, name) for name in _ANALYSIS},
    )
    window = window_for_commit(frame=original.frame, liquid=copy)
    Liquid.objects.filter(pk=copy.pk).update(window=window)
    copy.window = window
    notify_liquid("liquid.committed", copy, frame=original.frame)
    return window


def _fire(window: Window) -> Pass | None:
    """The window's pass now, unless it was born firing (shared mode, tempo 0) or the frame
    is paused (it fires when resumed, as any window)."""
    if window.status != WindowStatus.OPEN or window.frame.status != FrameStatus.OPEN:
        return Pass.objects.filter(window=window).first()
    Window.objects.filter(pk=window.pk, status=WindowStatus.OPEN).update(
        expires_at=timezone.now(), remaining_seconds=None
    )
    return window_fire(window_id=window.pk, force=True)


@transaction.atomic
def pass_regenerate(
    *, pass_: Pass, user: AbstractBaseUser, inputs: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Regenerate any pass (issue 28): a failed one runs again (`Pass.retry`, as the retry
    endpoint), a medium pass that stored an outcome regenerates that outcome.

    Raises:
        ApplicationError: it has nothing to regenerate yet (still running, 409).
    """
    if pass_.status == PassStatus.FAILED and not inputs:
        if pass_.kind == PassKind.EPILOGUE:
            retried = epilogue_retry(pass_=pass_)
        elif pass_.kind in FACE_PASS_KINDS:
            retried = face_pass_retry(pass_=pass_)
        else:
            retried = medium_pass_retry(pass_=pass_)
        return {"rewind": None, "passes": [retried]}
    outcome = (
        Outcome.objects.filter(source_pass=pass_).first() if pass_.kind == PassKind.MEDIUM else None
    )
    if outcome is None:
        raise ApplicationError(
            "This pass has no outcome to regenerate (it is still running, or not a medium pass).",
            status_code=409,
        )
    return outcome_regenerate_any(outcome=outcome, user=user, inputs=inputs)
