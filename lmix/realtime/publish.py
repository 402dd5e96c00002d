"""The one way server code publishes to websocket groups, from a request or a worker:
events, and revocations of access.

Sending goes through this process's ordered outbox (`outbox.py`): the caller never waits
on the network, and messages reach the layer in the order they were published.
"""

from typing import Any

from django.db import transaction

from .codes import CLOSE_FORBIDDEN
from .outbox import outbox, remember_server_loop

__all__ = [
    "flush",
    "group_send",
    "group_send_on_commit",
    "remember_server_loop",
    "revoke",
    "revoke_on_commit",
]


def _put(group: str, message: dict[str, Any]) -> None:
    box = outbox()
    if box is not None:
        box.put(group, message)


def group_send(group: str, payload: dict[str, Any]) -> None:
    """Send `payload` to every socket in `group`, now and in order. The layer may drop it;
    clients detect gaps by sequence number or stream index and re-read over REST."""
    _put(group, {"type": "group.event", "payload": payload})


def group_send_on_commit(group: str, payload: dict[str, Any]) -> None:
    """Publish after the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(lambda: group_send(group, payload))


def revoke(group: str, *, user_id: object = None, close_code: int = CLOSE_FORBIDDEN) -> None:
    """Take `group` away from sockets that may no longer hear it: those of `user_id`, or
    every socket in it when `user_id` is None. Each leaves all its groups and closes with
    `close_code` (4403: the client stops reconnecting).

    Use it when access ends: a seat released (`user_id` = its player, the frame's groups),
    a production deleted (its group, every socket). Call it after the change commits
    (`revoke_on_commit`), so a socket that checks again sees the change. A revocation the
    layer drops is caught by the consumer's periodic re-check on ping.
    """
    target = None if user_id is None else str(user_id)
    _put(group, {"type": "group.revoke", "user_id": target, "close_code": close_code})


def revoke_on_commit(
    group: str, *, user_id: object = None, close_code: int = CLOSE_FORBIDDEN
) -> None:
    """`revoke` after the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(lambda: revoke(group, user_id=user_id, close_code=close_code))


def flush(timeout: float = 5) -> bool:
    """Wait until everything this process published so far has been handed to the layer."""
    box = outbox()
    return box.flush(timeout) if box is not None else True
