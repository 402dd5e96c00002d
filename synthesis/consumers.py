"""The shared base of LMiX websocket consumers: auth close codes, group events, ping."""

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from . import realtime

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403


class GroupConsumer(AsyncJsonWebsocketConsumer):
    """Accepts, checks the session's user with `authorize`, joins the groups it returns.

    The groups are derived on the server; a client can never choose what it subscribes to.
    """

    groups_joined: list[str]

    async def authorize(self, user: Any) -> list[str] | None:
        """Return the groups this user may join on this socket, or None to refuse."""
        raise NotImplementedError

    async def connect(self) -> None:
        realtime.remember_server_loop()
        self.groups_joined = []
        await self.accept()
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        groups = await self.authorize(user)
        if groups is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        for group in groups:
            await self.channel_layer.group_add(group, self.channel_name)
        self.groups_joined = groups
        await self.send_json({"type": "ready"})

    async def disconnect(self, code: int) -> None:
        for group in self.groups_joined:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})
        else:
            await self.send_json(
                {"type": "error", "detail": 'Unknown message; send {"type": "ping"}.'}
            )

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs
    ) -> None:
        try:
            await super().receive(text_data=text_data, bytes_data=bytes_data, **kwargs)
        except ValueError:
            await self.send_json({"type": "error", "detail": "Messages must be JSON."})

    async def group_event(self, event: dict[str, Any]) -> None:
        await self.send_json(event["payload"])
