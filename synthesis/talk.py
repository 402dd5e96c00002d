"""Table talk: out-of-character messages at the table. Everyone in the frame reads them;
no soft or medium pass ever does (nothing in synthesis/medium/ or soft.py reads this
model), so saying "brb" or "should we split up?" never becomes something a character did.
Who joins, leaves or is removed from a seat is a notice in the same stream (`talk_notice`)."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from lmix.errors import ApplicationError
from lmix.text import has_visible_text

from .event_types import TalkCreated
from .frame_events import notify_frame
from .frame_selectors import FrameAccess
from .models import FrameStatus, Seat, TableTalk, TalkKind
from .selectors import talk_body


@transaction.atomic
def talk_post(*, access: FrameAccess, user: AbstractBaseUser, text: str) -> TableTalk:
    """Say something at the table, as the GM or as one's seat's player.

    Raises:
        ApplicationError: the frame is closed (409), or the text shows nothing (400).
    """
    if access.frame.status == FrameStatus.CLOSED:
        raise ApplicationError("This frame is closed.", status_code=409)
    if not has_visible_text(text):
        raise ApplicationError(
            "Write something first: the text shows nothing (only spaces or invisible characters).",
            details={"text": ["Empty."]},
        )
    seat_id = None if access.is_gm else min(access.seat_ids, key=str)
    talk = TableTalk.objects.create(
        frame=access.frame, author=user, seat_id=seat_id, by_gm=access.is_gm, text=text
    )
    _told(talk)
    return talk


def talk_notice(*, seat: Seat, user_id: object, kind: TalkKind) -> TableTalk:
    """Tell the table that a player joined, left or was removed from `seat` (inside the
    seat's changing transaction, after its `seat.changed`). The row holds no text: pages
    write it from the player's name and the seat's public name, so a covert character's
    real name is never in it."""
    talk = TableTalk.objects.create(frame_id=seat.frame_id, author_id=user_id, seat=seat, kind=kind)
    _told(talk)
    return talk


def _told(talk: TableTalk) -> None:
    notify_frame(talk.frame_id, TalkCreated, type="talk.created", talk=talk_body(talk))
