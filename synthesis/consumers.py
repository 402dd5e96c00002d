"""The frame socket: frame-wide events for everyone seated and the GM, a seat's private
narrative stream for its player, everything for the GM; typing and online presence. A
closed frame's sockets close with 4404."""

from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from lmix.errors import ApplicationError
from lmix.realtime.coalesce import Coalescer
from lmix.realtime.codes import CLOSE_GONE
from lmix.realtime.consumers import GroupConsumer

from .frame_events import (
    notify_online,
    notify_presence,
    notify_presence_ask,
    socket_groups,
    spectator_group,
)
from .frame_selectors import frame_access, spectated_frame
from .models import FrameStatus


class FrameSocket(GroupConsumer):
    """A socket on one frame. Closing a frame closes its sockets once `frame.closed` is
    sent (frame_sockets_close_on_commit); one opened on a closed frame (a reload, a
    reconnect) closes likewise before it is ready, and the re-check on ping closes one whose
    revocation the layer dropped: nothing will ever be sent on them."""

    ended = False  # `authorize` found the frame closed

    async def still_authorized(self) -> bool:
        if not await super().still_authorized():
            return False
        if self.ended:
            await self.leave_groups()
            await self.close(code=CLOSE_GONE)
            return False
        return True


class FrameConsumer(FrameSocket):
    async def authorize(self, user: Any) -> list[str] | None:
        access = await database_sync_to_async(frame_access)(user=user, frame_id=self.frame_id)
        if access is None:
            return None
        self.seat_ids = {str(seat_id) for seat_id in access.seat_ids}
        self.ended = access.frame.status == FrameStatus.CLOSED
        return socket_groups(access)

    async def on_vapor(self, message: dict[str, Any]) -> None:
        """The player is typing for their seat: others see presence, never the text."""
        seat = message.get("seat")
        if not isinstance(seat, str) or seat not in self.seat_ids:
            raise ApplicationError("You can only type for your own seat.")
        typing = message.get("typing", True) is not False
        # At most LMIX_VAPOR_PER_SECOND per socket; faster keystrokes are coalesced.
        if not hasattr(self, "vapor"):
            self.vapor = Coalescer(self.publish_typing, settings.LMIX_VAPOR_PER_SECOND)
        self.vapor.put(seat, typing)

    def publish_typing(self, seat: str, typing: bool) -> None:
        if self.live:
            notify_presence(self.frame_id, seat, typing=typing)

    handlers = GroupConsumer.handlers | {"vapor": on_vapor}

    # Who is here: kept by the sockets themselves, nothing stored. A socket says hello for
    # its seats when it connects; the others answer that they are here too; one that closes
    # says its seats are gone, and another socket of the same seat (a second tab) answers
    # that it is still here.

    async def connect(self) -> None:
        await super().connect()
        if self.live:
            if self.seat_ids:
                self.announce(hello=True)
            else:  # the GM without a seat: nobody greets them otherwise
                notify_presence_ask(self.frame_id)
            self.online = True

    async def left(self) -> None:
        """However the socket ended (closed, revoked, failed): its seats are gone from it."""
        if getattr(self, "vapor", None) is not None:
            self.vapor.cancel()
        if getattr(self, "online", False):
            self.online = False
            for seat in self.seat_ids:
                notify_online(self.frame_id, seat, online=False)

    async def group_event(self, event: dict[str, Any]) -> None:
        await super().group_event(event)
        payload = event["payload"]
        if self.live and payload.get("type") == "presence.ask":
            self.announce()
            return
        if not self.live or payload.get("type") != "presence" or "online" not in payload:
            return
        mine = payload.get("seat") in self.seat_ids
        if (payload.get("hello") and not mine) or (mine and payload["online"] is False):
            self.announce()

    def announce(self, *, hello: bool = False) -> None:
        for seat in self.seat_ids:
            notify_online(self.frame_id, seat, online=True, hello=hello)

    @property
    def frame_id(self) -> str:
        return self.scope["url_route"]["kwargs"]["frame_id"]


class SpectatorConsumer(FrameSocket):
    """A spectator's socket (the GM's spectator link): the public events only. Stopping or
    renewing the link revokes it at once; a ping re-checks the link as a backstop. The link
    is the only credential, so a signed-out visitor may use it too."""

    allows_anonymous = True

    async def authorize(self, user: Any) -> list[str] | None:
        code = self.scope["url_route"]["kwargs"]["code"]
        frame = await database_sync_to_async(spectated_frame)(code=code)
        if frame is None:
            return None
        self.ended = frame.status == FrameStatus.CLOSED
        return [spectator_group(frame.pk)]
