"""The frame socket: frame-wide events for everyone seated and the GM, a seat's private
narrative stream for its player, everything for the GM; typing presence inbound."""

from typing import Any

from channels.db import database_sync_to_async

from lmix.errors import ApplicationError
from lmix.realtime.consumers import GroupConsumer
from productions.frame_events import notify_presence, socket_groups
from productions.selectors import frame_access


class FrameConsumer(GroupConsumer):
    async def authorize(self, user: Any) -> list[str] | None:
        access = await database_sync_to_async(frame_access)(
            user=user, frame_id=self.scope["url_route"]["kwargs"]["frame_id"]
        )
        if access is None:
            return None
        self.seat_ids = {str(seat_id) for seat_id in access.seat_ids}
        return socket_groups(access)

    async def on_vapor(self, message: dict[str, Any]) -> None:
        """The player is typing for their seat: others see presence, never the text."""
        seat = message.get("seat")
        if not isinstance(seat, str) or seat not in self.seat_ids:
            raise ApplicationError("You can only type for your own seat.")
        frame_id = self.scope["url_route"]["kwargs"]["frame_id"]
        notify_presence(frame_id, seat, typing=message.get("typing", True) is not False)

    handlers = GroupConsumer.handlers | {"vapor": on_vapor}
