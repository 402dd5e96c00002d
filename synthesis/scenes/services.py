"""Opening and closing scenes. A frame's first scene opens with it (frames.py::frame_create;
`scene_current` opens it for a frame older than scenes); a scene closes by the GM's button
(`scene_close`), or when an outcome states a new place or comes after a long pause
(`scene_after_outcome`, queued after the outcome: never on its way). Closing is cheap and
under the frame's lock: the scene's `closed_seq` is fixed, the next scene opens, the
frame's `scene_seq` moves (so gather keeps the closed scene's outcomes out of prompts), and
the summaries are queued (run.py) after commit."""

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from lmix.errors import ApplicationError

from ..event_types import SceneEvent
from ..frame_events import lock_frame, notify_frame
from ..models import Frame, FrameStatus, Outcome
from ..scene_models import TITLE_MAX, Scene, SceneReason, SceneStatus, SummaryStatus


def scene_body(scene: Scene) -> dict:
    """A scene as everyone in the frame reads it (events and the list alike)."""
    return {
        "id": str(scene.pk),
        "number": scene.number,
        "title": scene.title,
        "location": scene.location,
        "opened_seq": scene.opened_seq,
        "closed_seq": scene.closed_seq,
        "closed_reason": scene.closed_reason,
        "status": scene.status,
        "summary_status": scene.summary_status,
        "opened_at": scene.opened_at.isoformat(),
        "closed_at": scene.closed_at.isoformat() if scene.closed_at else None,
    }


def scene_current(*, frame: Frame) -> Scene:
    """The frame's newest scene: the open one, until the frame closed for good (its last
    scene then closed with it). A frame made before scenes gets its first one now, holding
    all its play so far."""
    scene = Scene.objects.filter(frame=frame).order_by("-number").first()
    if scene is not None:
        return scene
    try:
        with transaction.atomic():
            return Scene.objects.create(frame=frame, number=1, opened_seq=0)
    except IntegrityError:  # opened meanwhile by another request
        return Scene.objects.get(frame=frame, number=1)


def scene_close(
    *,
    frame: Frame,
    reason: str,
    next_title: str = "",
    upto_seq: int | None = None,
    last: bool = False,
) -> tuple[Scene, Scene | None]:
    """Close the frame's open scene and open the next one, titled `next_title` (none when
    it is the `last`: the frame is being closed for good).

    Args:
        upto_seq: the last outcome seq of the closing scene; the frame's seq (everything so
            far) if not given.

    Returns:
        The closed scene and the new open one (None when `last`).

    Raises:
        ApplicationError: the frame is closed (409), or the scene holds nothing yet (409).
    """
    title = " ".join(next_title.split())
    if len(title) > TITLE_MAX:
        raise ApplicationError(
            f"A scene's title is at most {TITLE_MAX} characters.",
            details={"title": ["Too long."]},
        )
    with transaction.atomic():
        lock_frame(frame.pk)
        frame.refresh_from_db(fields=["seq", "status"])
        if frame.status == FrameStatus.CLOSED:
            raise ApplicationError("The frame is closed.", status_code=409)
        scene = scene_current(frame=frame)
        scene = Scene.objects.select_for_update().get(pk=scene.pk)
        closed_seq = frame.seq if upto_seq is None else upto_seq
        if not Outcome.objects.filter(
            frame=frame, seq__gt=scene.opened_seq, seq__lte=closed_seq
        ).exists():
            raise ApplicationError("Nothing has happened in this scene yet.", status_code=409)
        now = timezone.now()
        Scene.move(
            scene.pk,
            SceneStatus.CLOSED,
            closed_seq=closed_seq,
            closed_reason=reason,
            closed_at=now,
            summary_status=SummaryStatus.PENDING,
        )
        scene.refresh_from_db()
        notify_frame(frame.pk, SceneEvent, type="scene.closed", scene=scene_body(scene))
        opened = None
        if not last:  # the last scene stays in the epilogues' prompts (epilogue.py)
            Frame.objects.filter(pk=frame.pk).update(scene_seq=closed_seq, scene_at=now)
            opened = Scene.objects.create(
                frame=frame,
                number=scene.number + 1,
                title=title,
                location=title if reason == SceneReason.LOCATION else "",
                opened_seq=closed_seq,
            )
            notify_frame(frame.pk, SceneEvent, type="scene.opened", scene=scene_body(opened))
        transaction.on_commit(lambda: scene_summary_enqueue(scene.pk))
    return scene, opened


def scene_summary_enqueue(scene_id: object) -> None:
    from ..enqueue import scene_summary_enqueue as enqueue

    enqueue(scene_id)


def scene_after_outcome(*, outcome_id: object) -> Scene | None:
    """After an outcome (queued): close the open scene if the outcome states another place
    than the scene's (the outcome ends it; the next is titled by the place) or comes after a
    long pause (LMIX_SCENE_PAUSE_MINUTES: the scene ends with the outcome before it). An
    outcome the scene already moved past, or a held one, changes nothing.

    Returns:
        The scene it closed, if any.
    """
    outcome = Outcome.objects.select_related("frame").filter(pk=outcome_id).first()
    if outcome is None or outcome.held or outcome.frame.status == FrameStatus.CLOSED:
        return None
    frame = outcome.frame
    scene = scene_current(frame=frame)
    if outcome.seq <= scene.opened_seq:
        return None
    pause = settings.LMIX_SCENE_PAUSE_MINUTES
    if pause > 0:
        before = (
            Outcome.objects.filter(frame=frame, seq__gt=scene.opened_seq, seq__lt=outcome.seq)
            .order_by("-seq")
            .first()
        )
        if before is not None and outcome.created_at - before.created_at > timedelta(minutes=pause):
            return _close_quietly(frame, SceneReason.PAUSE, upto_seq=before.seq, title="")
    place = " ".join(outcome.location.split())
    if not place:
        return None
    if not scene.location:  # the scene's first stated place names it: no change
        Scene.objects.filter(pk=scene.pk, location="").update(location=place[:TITLE_MAX])
        return None
    if place.casefold() == scene.location.casefold():
        return None
    return _close_quietly(frame, SceneReason.LOCATION, upto_seq=outcome.seq, title=place)


def scene_end(*, frame: Frame) -> Scene | None:
    """The frame closes for good (epilogue.py::frame_close, in its transaction, before the
    frame's last event): its open scene closes too, summarised like any other, if anything
    happened in it.

    Returns:
        The scene it closed, if any.
    """
    try:
        with transaction.atomic():
            closed, _ = scene_close(frame=frame, reason=SceneReason.GM, last=True)
            return closed
    except ApplicationError:
        return None


def _close_quietly(frame: Frame, reason: str, *, upto_seq: int, title: str) -> Scene | None:
    """`scene_close` by the rules: a race lost to the GM (or to another outcome's check)
    closes nothing."""
    try:
        with transaction.atomic():
            current = scene_current(frame=frame)
            if upto_seq <= current.opened_seq:
                return None
            closed, _ = scene_close(frame=frame, reason=reason, next_title=title, upto_seq=upto_seq)
            return closed
    except ApplicationError:
        return None
