"""What production sockets are sent: small numbered events, only to the production's owner.

Every event carries the production's `seq`, increased by one per event in the same
transaction that changes the data, so a client that sees a gap re-reads over REST.
"""

import json
from typing import Any

from django.db.models import F
from rest_framework.renderers import JSONRenderer

from synthesis.realtime import group_send_on_commit

from .models import Production, Turn


def production_group(production_id: object) -> str:
    """The only group a production's events go to; sockets join it after an owner check."""
    return f"production.{production_id}"


def _next_seq(production_id: object) -> int:
    Production.objects.filter(pk=production_id).update(event_seq=F("event_seq") + 1)
    return Production.objects.values_list("event_seq", flat=True).get(pk=production_id)


def _notify(production_id: object, event: dict[str, Any]) -> None:
    event["seq"] = _next_seq(production_id)
    group_send_on_commit(production_group(production_id), event)


def turn_event_body(turn: Turn) -> dict[str, Any]:
    """The turn as plain JSON types (the Redis layer packs with msgpack), without the
    directive: big bodies are read over REST."""
    from .serializers import TurnSerializer

    return json.loads(JSONRenderer().render(TurnSerializer(turn).data))


def notify_turn_created(turn: Turn) -> None:
    _notify(turn.production_id, {"type": "turn.created", "turn": turn_event_body(turn)})


def notify_turn_token(turn: Turn, *, index: int, delta: str) -> None:
    _notify(
        turn.production_id,
        {"type": "turn.token", "turn": str(turn.pk), "index": index, "delta": delta},
    )


def notify_turn_finished(turn: Turn) -> None:
    kind = "turn.failed" if turn.status == "failed" else "turn.done"
    _notify(turn.production_id, {"type": kind, "turn": turn_event_body(turn)})


def notify_autoplay(production: Production) -> None:
    _notify(
        production.pk,
        {"type": "autoplay", "autoplay_remaining": production.autoplay_remaining},
    )
