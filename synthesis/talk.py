"""Table talk: out-of-character messages at the table. Everyone in the frame reads them;
no soft or medium pass ever does (nothing in synthesis/medium/ or soft.py reads this
model), so saying "brb" or "should we split up?" never becomes something a character did."""

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from lmix.errors import ApplicationError
from lmix.text import has_visible_text

from .event_types import TalkCreated
from .frame_events import notify_frame
from .frame_selectors import FrameAccess
from .models import FrameStatus, TableTalk
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
    notify_frame(access.frame.pk, TalkCreated, type="talk.created", talk=talk_body(talk))
    return talk
