"""The production socket: its owner's live view of turns being created and streamed."""

from typing import Any

from channels.db import database_sync_to_async

from lmix.realtime.consumers import GroupConsumer

from .events import production_group
from .models import Production


class ProductionConsumer(GroupConsumer):
    async def authorize(self, user: Any) -> list[str] | None:
        production_id = self.scope["url_route"]["kwargs"]["production_id"]
        owned = await database_sync_to_async(
            Production.objects.filter(pk=production_id, owner=user).exists
        )()
        return [production_group(production_id)] if owned else None
