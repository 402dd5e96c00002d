"""Writes to liquid: submit, edit, withdraw and commit an intention for a seat (or an
author's or designer's writing, synthesis/faces/); and the
GM's frame controls (pause, resume, close), which freeze and restore the windows."""

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from lmix.errors import ApplicationError
from lmix.text import has_visible_text
from lmix.throttles import (
    AttemptThrottle,
    LiquidEditSeatThrottle,
    LiquidSeatThrottle,
    LiquidUserThrottle,
    attempts_count,
)

from .enqueue import soft_pass_enqueue
from .event_types import FrameStatusEvent
from .events import notify_liquid
from .faces.run import face_commit
from .frame_events import frame_sockets_close_on_commit, lock_frame, notify_frame
from .models import (
    FRAME_TRANSITIONS,
    Face,
    Frame,
    FrameStatus,
    Liquid,
    LiquidStatus,
    Pass,
    PassKind,
    Seat,
    SeatController,
    Trigger,
    Window,
)
from .selectors import window_body
from .windows import window_for_commit, windows_pause, windows_resume


def may_write_for(*, frame: Frame, seat: Seat, user: AbstractBaseUser) -> bool:
    """A seat's player writes for it; the GM writes for the seats assistants play."""
    if seat.controller == SeatController.HUMAN:
        return seat.user_id == user.pk
    return seat.controller == SeatController.AI and frame.owner_id == user.pk


def _writable(
    frame: Frame, seat: Seat | None, user: AbstractBaseUser | None, *, face: str = Face.PLAYER
) -> None:
    if frame.status == FrameStatus.CLOSED:
        raise ApplicationError("This frame is closed.", status_code=409)
    if face != Face.PLAYER:
        face_check(frame=frame, face=face, user=user)
    elif user is not None and (
        seat is None or not may_write_for(frame=frame, seat=seat, user=user)
    ):
        raise ApplicationError("You can only write for your own character.", status_code=403)


def face_check(*, frame: Frame, face: str, user: AbstractBaseUser | None) -> None:
    """Who writes as an author or a designer: the GM always; a player where the GM opened
    that face (`Frame.player_faces`); never an assistant.

    Raises:
        ApplicationError: 403 saying which face is closed to players here.
    """
    if user is not None and frame.owner_id == user.pk:
        return
    if user is None or face not in (frame.player_faces or []):
        raise ApplicationError(
            f"The GM has not opened the {face} face to players in this frame.", status_code=403
        )


def _check_content(content: str) -> None:
    if not has_visible_text(content):
        raise ApplicationError(
            "Write what your character intends: the text shows nothing (only spaces or "
            "invisible characters).",
            details={"content": ["Empty."]},
        )


def _count_write(
    seat: Seat | None, user: AbstractBaseUser | None, per_seat: AttemptThrottle
) -> None:
    """Count a player's submit or edit per seat and per user, once it may be written
    (a refused one counts nothing). The GM's seatless writing counts per user only."""
    if user is not None:
        counted = [(LiquidUserThrottle(), f"user:{user.pk}")]
        if seat is not None:
            counted.insert(0, (per_seat, f"seat:{seat.pk}"))
        attempts_count(counted)


def _soft_pass(liquid: Liquid, trigger: str) -> None:
    """Analyse this revision of the liquid once the transaction commits."""

    pass_ = Pass.objects.create(
        frame_id=liquid.frame_id,
        seat_id=liquid.seat_id,
        kind=PassKind.SOFT,
        trigger=trigger,
        liquid=liquid,
        liquid_revision=liquid.revision,
    )
    transaction.on_commit(lambda: soft_pass_enqueue(pass_.pk))


@transaction.atomic
def liquid_submit(
    *,
    frame: Frame,
    seat: Seat | None,
    content: str,
    user: AbstractBaseUser | None,
    limited: bool = False,
    face: str = Face.PLAYER,
    held: bool = False,
) -> Liquid:
    """Store an intention for `seat` and start its soft pass. `user` None: the seat's
    assistant wrote it (AI seats); `held`, the secret guard holds its words for the GM
    (ai_seats.py). A player's intentions are limited (docs/security.md,
    "Play limits"): so many waiting per seat; and, `limited` (the API's requests), so many
    a period per seat and per user. Assistants are held by their own limits (ai_seats.py),
    and scripted scenes in tests play faster than people.

    An author's or designer's writing (`face`) has no soft pass and no window: committed,
    its own pass makes it a content entry or a frame skill (synthesis/faces/). It is kept
    with the writer's seat, if they have one (the GM has none), whatever `seat` says.

    Raises:
        ApplicationError: the frame is closed (409), the seat is not the user's or the face
            is not open to players (403), the text shows nothing (400), the seat already
            has LMIX_PENDING_LIQUID_PER_SEAT intentions waiting (409), or a rate is spent
            (429, with `retry_after`).
    """
    if face != Face.PLAYER:
        seat = _writers_seat(frame, user)
    _writable(frame, seat, user, face=face)
    _check_content(content)
    if user is not None and seat is not None:
        _check_pending(frame, seat)
    if limited:
        _count_write(seat, user, LiquidSeatThrottle())
    liquid = Liquid.objects.create(
        frame=frame, seat=seat, author=user, content=content, face=face, held=held
    )
    notify_liquid("liquid.created", liquid, frame=frame)
    if face == Face.PLAYER:
        _soft_pass(liquid, Trigger.SUBMIT)
    return liquid


def _writers_seat(frame: Frame, user: AbstractBaseUser | None) -> Seat | None:
    """The seat a player writes an author's or designer's text from (their own, so the
    frame's visibility treats it as theirs); None for the GM, who has none."""
    if user is None:
        return None
    return Seat.objects.filter(frame=frame, user_id=user.pk).first()


def _check_pending(frame: Frame, seat: Seat) -> None:
    """A 409, not a 429: waiting frees nothing; committing or withdrawing one does."""
    cap = settings.LMIX_PENDING_LIQUID_PER_SEAT
    if not cap:
        return
    lock_frame(frame.pk)  # two submits at once cannot both take the last place
    pending = Liquid.objects.filter(seat=seat, status=LiquidStatus.SUBMITTED).count()
    if pending >= cap:
        raise ApplicationError(
            f"This character already has {pending} intentions waiting (at most {cap}): "
            "commit or withdraw one first.",
            status_code=409,
        )


def _locked(liquid: Liquid, user: AbstractBaseUser | None) -> Liquid:
    # The frame first, then the liquid: the order a pass consuming or interrupting it and
    # a soft result take them in (the other order deadlocks with them on PostgreSQL).
    lock_frame(liquid.frame_id)
    liquid = (
        Liquid.objects.select_for_update(of=("self",))
        .select_related("frame", "seat")
        .get(pk=liquid.pk)
    )
    _writable(liquid.frame, liquid.seat, user, face=liquid.face)
    if liquid.face != Face.PLAYER and user is not None and liquid.author_id != user.pk:
        raise ApplicationError("You can only change your own writing.", status_code=403)
    if liquid.status != LiquidStatus.SUBMITTED:
        raise ApplicationError(
            f"This intention is {liquid.status}; it can no longer change.", status_code=409
        )
    return liquid


@transaction.atomic
def liquid_edit(
    *, liquid: Liquid, content: str, user: AbstractBaseUser | None, limited: bool = False
) -> Liquid:
    """Revise a submitted intention; its analysis is redone for the new text. `limited`
    (the API's requests): a player's edits count per seat and per user (429, with
    `retry_after`, past either limit). The GM's edit of what an AI seat wrote (one the
    secret guard holds) makes the words the GM's: chosen, no longer the model's."""
    liquid = _locked(liquid, user)
    _check_content(content)
    if limited:
        _count_write(liquid.seat, user, LiquidEditSeatThrottle())
    liquid.content, liquid.revision = content, liquid.revision + 1
    liquid.analysis_source, liquid.analysis_note = "", ""
    if liquid.author_id is None and user is not None:
        liquid.author_id = user.pk
    liquid.save(
        update_fields=[
            "content", "revision", "analysis_source", "analysis_note", "author", "updated_at"
        ]
    )  # fmt: skip
    notify_liquid("liquid.updated", liquid, frame=liquid.frame)
    if liquid.face == Face.PLAYER:
        _soft_pass(liquid, Trigger.EDIT)
    return liquid


@transaction.atomic
def liquid_withdraw(*, liquid: Liquid, user: AbstractBaseUser | None) -> Liquid:
    """Take back a submitted intention (it stays, withdrawn, for the GM's record)."""
    liquid = _locked(liquid, user)
    Liquid.move(liquid.pk, LiquidStatus.WITHDRAWN, only_from=(LiquidStatus.SUBMITTED,))
    liquid.refresh_from_db()
    notify_liquid("liquid.withdrawn", liquid, frame=liquid.frame)
    return liquid


@transaction.atomic
def liquid_commit(*, liquid: Liquid, user: AbstractBaseUser | None) -> Liquid:
    """Commit an intention: it can no longer change, and its character's window opens (or,
    already open, gathers it too). An AI seat's intention the secret guard holds is
    committed by the GM alone (`may_write_for`): the GM releases its words, which everyone
    who may read liquid then reads, and which count as chosen from then on (its author)."""
    liquid = _locked(liquid, user)  # locked and submitted: the move cannot lose
    if liquid.face != Face.PLAYER:
        return face_commit(liquid=liquid)
    now = timezone.now()
    liquid.status, liquid.committed_at, liquid.updated_at = LiquidStatus.COMMITTED, now, now
    released = {}
    if liquid.held:
        liquid.held, liquid.author_id = False, liquid.author_id or getattr(user, "pk", None)
        released = {"held": False, "author_id": liquid.author_id}
    notify_liquid("liquid.committed", liquid, frame=liquid.frame)
    window = window_for_commit(frame=liquid.frame, liquid=liquid)
    Liquid.move(  # committed and in its window: one write
        liquid.pk,
        LiquidStatus.COMMITTED,
        only_from=(LiquidStatus.SUBMITTED,),
        committed_at=now,
        updated_at=now,
        window=window,
        **released,
    )
    liquid.window = window
    return liquid


_STATUS_EVENTS = {
    FrameStatus.PAUSED: "frame.paused",
    FrameStatus.OPEN: "frame.resumed",
    FrameStatus.CLOSED: "frame.closed",
}


@transaction.atomic
def frame_status_set(*, frame: Frame, status: str) -> Frame:
    """The GM pauses (every open window freezes, keeping its time left), resumes (they run
    on) or closes the frame for good (nothing more is written; windows stay frozen; no move
    leaves `closed`): once everyone has been sent `frame.closed`, every socket on it closes
    with 4404.

    Raises:
        ApplicationError: the move is not possible from the frame's status (409).
    """
    frame = Frame.objects.select_for_update().get(pk=frame.pk)
    if status not in FRAME_TRANSITIONS[frame.status]:
        raise ApplicationError(
            f"The frame is {frame.status}; it cannot be {status} now.", status_code=409
        )
    windows: list[Window] = []
    if frame.status == FrameStatus.OPEN:
        windows = windows_pause(frame=frame)
    Frame.move(frame.pk, status, only_from=(frame.status,))  # locked: it cannot lose
    frame.refresh_from_db(fields=["status", "updated_at"])
    if status == FrameStatus.OPEN:  # resumed windows are fired only in an open frame
        windows = windows_resume(frame=frame)
    # The windows it froze or restarted come along, so countdowns stop and go on in step.
    notify_frame(
        frame.pk,
        FrameStatusEvent,
        type=_STATUS_EVENTS[status],
        status=status,
        windows=[window_body(window) for window in windows],
    )
    if status == FrameStatus.CLOSED:
        frame_sockets_close_on_commit(frame.pk)  # after frame.closed: sent in this order
    return frame
