"""Reads of frames: who may see a frame and what, its seats for prompts and pages, invites,
spectator links and bans."""

import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.http import Http404

from authoring.models import Membership
from lmix.errors import ApplicationError
from lmix.prepared import Param, Prepared, Statement, together
from productions.knowledge import memberships_attach, memberships_prefetch, public_name

from .models import (
    Face,
    Frame,
    FrameBan,
    FrameStatus,
    Liquid,
    LiquidStatus,
    Outcome,
    Seat,
    SeatController,
    Window,
    WindowStatus,
)


@dataclass(frozen=True)
class FrameAccess:
    """What one user may do in one frame: the GM sees everything; a player their seat."""

    frame: Frame
    is_gm: bool
    seat_ids: frozenset[uuid.UUID]
    # Who reads: a seat's previous players' intentions are not its new player's to read.
    user_id: object = None


def frame_list(*, user: AbstractBaseUser) -> QuerySet[Frame]:
    """Frames the user runs (GM) or sits in."""
    return (
        Frame.objects.filter(Q(owner=user) | Q(seats__user=user))
        .distinct()
        .select_related("production")
        .order_by("-created_at")
    )


def frame_summaries(*, user: AbstractBaseUser) -> list[dict[str, Any]]:
    """The `FrameList` answer: each frame the user runs or sits in, with the character they
    play in it (`my_seat`), whom a round under way waits for (the player-held seats with no
    committed intention nor window of their own once some seat's window runs, as the
    player's page says it: frontend/src/lib/alerts.ts) and when it was last active (its
    newest outcome or change). Four queries, whatever the number of frames."""
    newest = Outcome.objects.filter(frame=OuterRef("pk")).order_by("-seq").values("created_at")
    frames = list(frame_list(user=user).annotate(last_outcome_at=Subquery(newest[:1])))
    ids = [frame.pk for frame in frames]
    seats: dict[object, list[Seat]] = {}
    for seat in Seat.objects.filter(frame__in=ids).select_related("persona"):
        seats.setdefault(seat.frame_id, []).append(seat)
    ready = set(
        Window.objects.filter(
            frame__in=ids, status__in=[WindowStatus.OPEN, WindowStatus.FIRING]
        ).values_list("frame_id", "seat_id")
    )
    running = {frame_id for frame_id, _ in ready}
    ready |= set(
        Liquid.objects.filter(
            frame__in=ids, status=LiquidStatus.COMMITTED, face=Face.PLAYER
        ).values_list("frame_id", "seat_id")
    )
    return [
        _summary(frame, user, seats.get(frame.pk, []), ready if frame.pk in running else None)
        for frame in frames
    ]


def _summary(
    frame: Frame, user: AbstractBaseUser, seats: list[Seat], ready: set | None
) -> dict[str, Any]:
    """One frame of `frame_summaries`; `ready`: the (frame, seat) pairs with a window or a
    committed intention, None when no round runs in it."""
    mine = next((seat for seat in seats if seat.user_id == user.pk), None)
    waiting = (
        [
            seat
            for seat in seats
            if seat.controller == SeatController.HUMAN and (frame.pk, seat.pk) not in ready
        ]
        if ready is not None and frame.status == FrameStatus.OPEN
        else []
    )
    active = max(x for x in (frame.created_at, frame.updated_at, frame.last_outcome_at) if x)
    return {
        "id": str(frame.pk),
        "name": frame.name,
        "production": str(frame.production_id),
        "production_name": frame.production.name,
        "status": frame.status,
        "mode": frame.mode,
        "is_gm": frame.owner_id == user.pk,
        "created_at": frame.created_at.isoformat(),
        "active_at": active.isoformat(),
        # The character's own name: its player knows it.
        "my_seat": (
            {"id": str(mine.pk), "name": mine.persona.name, "avatar_url": mine.persona.avatar_url}
            if mine
            else None
        ),
        "waiting_for": [public_name(seat.persona) for seat in waiting],
        "my_turn": mine is not None and mine in waiting,
    }


def frame_access(*, user: AbstractBaseUser, frame_id: object) -> FrameAccess | None:
    """The user's access to the frame, or None when they are neither its GM nor seated."""
    if not user.is_authenticated or not is_uuid(frame_id):
        return None
    try:  # by key, so no ORDER BY (`first()` would add one)
        frame = Frame.objects.select_related("production").get(pk=frame_id)
    except Frame.DoesNotExist:
        return None
    return frame_access_to(user=user, frame=frame)


def frame_access_to(*, user: AbstractBaseUser, frame: Frame) -> FrameAccess | None:
    """`frame_access` for a frame the caller already read (with its production)."""
    if not user.is_authenticated:
        return None
    seats = Seat.objects.filter(frame=frame, user=user.pk).values_list("pk", flat=True)
    seat_ids = frozenset(seats)
    is_gm = frame.owner_id == user.pk
    if not is_gm and not seat_ids:
        return None
    return FrameAccess(frame=frame, is_gm=is_gm, seat_ids=seat_ids, user_id=user.pk)


def frame_access_or_404(*, user: AbstractBaseUser, frame_id: object) -> FrameAccess:
    """`frame_access`, or a 404 that says nothing about whether the frame exists."""
    access = frame_access(user=user, frame_id=frame_id)
    if access is None:
        raise Http404("No such frame.")
    return access


GM_ONLY = "Only the frame's GM can do that."


def frame_gm_access_or_404(
    *, user: AbstractBaseUser, frame_id: object, message: str = GM_ONLY
) -> FrameAccess:
    """The caller's access to a frame they run: its one check for every GM-only route.

    Raises:
        Http404: an outsider (neither its GM nor seated), as a missing frame.
        ApplicationError: a player of the frame (403, `message` saying what only the GM may).
    """
    access = frame_access_or_404(user=user, frame_id=frame_id)
    if not access.is_gm:
        raise ApplicationError(message, status_code=403)
    return access


# `seats_for_prompts_reads`.
SEATS_FOR_PROMPTS = Prepared(
    lambda: Seat.objects.filter(frame=Param(Seat, "frame")).select_related("persona")
)
SEATED_MEMBERSHIPS = Prepared(
    lambda: memberships_prefetch().queryset.filter(
        persona__in=Seat.objects.filter(frame=Param(Seat, "frame")).values("persona")
    )
)


def seats_for_prompts(*, frame: Frame) -> list[Seat]:
    """The frame's seats in order with what prompts read of them: their personas and
    memberships (two queries, one round trip). Lighter than `seats_load` (no players or
    assistants), for the passes that run on every submit and commit."""
    return seats_with_memberships(*together(*seats_for_prompts_reads(frame_id=frame.pk)))


def seats_for_prompts_reads(*, frame_id: object) -> tuple[Statement, Statement]:
    """`seats_for_prompts`' two reads, to send with others (`together`). Prepared
    (lmix/prepared.py): every soft pass (each submit) and every medium pass (each outcome,
    with `gather`'s other reads in one round trip) reads them."""
    return SEATS_FOR_PROMPTS.read(frame=frame_id), SEATED_MEMBERSHIPS.read(frame=frame_id)


def seats_with_memberships(seats: list[Seat], memberships: list[Membership]) -> list[Seat]:
    memberships_attach([seat.persona for seat in seats], memberships)
    return seats


def seats_load(*, frame: Frame) -> list[Seat]:
    """The frame's seats in order with their personas (memberships too, so compiling and
    naming ask nothing more), players and assistants: two queries."""
    return list(
        Seat.objects.filter(frame=frame)
        .select_related("persona", "user", "assistant__model", "assistant__persona")
        .prefetch_related(memberships_prefetch("persona__"))
    )


def is_uuid(value: object) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def invite_preview(*, user: AbstractBaseUser, invite_code: str) -> dict[str, Any]:
    """What an invite shows a signed-in user before they take a seat: the frame, and each
    seat's character as everyone may see it (public name, avatar, universal truth) with
    who holds it. Nothing secret: knowing a code lets one take an open seat, nothing more.

    Raises:
        ApplicationError: no frame has that code, a rotated code included (404).
    """
    frame = (
        Frame.objects.filter(invite_code=invite_code).select_related("production").first()
        if invite_code
        else None
    )
    if frame is None:
        raise ApplicationError(
            "This invite link is not valid (any more). Ask the GM for a new one.",
            status_code=404,
        )
    seats = list(Seat.objects.filter(frame=frame).select_related("persona", "user"))
    return {
        "frame": {
            "id": str(frame.pk),
            "name": frame.name,
            "production_name": frame.production.name,
            "status": frame.status,
            "mode": frame.mode,
        },
        "my_seat": next((str(s.pk) for s in seats if s.user_id == user.pk), None),
        "seats": [
            {
                "id": str(seat.pk),
                "persona": str(seat.persona_id),
                "name": public_name(seat.persona),
                "avatar_url": seat.persona.avatar_url,
                "universal_truth": seat.persona.universal_truth,
                "controller": seat.controller,
                "player": seat.user.username if seat.user_id else None,
            }
            for seat in seats
        ],
    }


def spectated_frame(*, code: str) -> Frame | None:
    """The frame a spectator link shows, while the GM allows it."""
    if not code:
        return None
    return Frame.objects.filter(spectator_code=code).select_related("production").first()


def frame_ban_list(*, frame: Frame) -> list[dict[str, Any]]:
    """The players the GM removed from the frame, oldest first, for the GM's page."""
    bans = FrameBan.objects.filter(frame=frame).select_related("user")
    return [
        {"user": ban.user_id, "player": ban.user.username, "banned_at": ban.created_at.isoformat()}
        for ban in bans
    ]
