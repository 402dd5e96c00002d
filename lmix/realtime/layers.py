"""Giving a consumer's channel back to the channel layer once its socket has ended."""

from typing import Any


async def release_channel(layer: Any, channel: str) -> None:
    """Drop `channel`'s queue, and its subscription on Redis, if the layer still holds them.

    channels_redis's pub/sub layer lets a channel go only when a `receive` waiting on it is
    cancelled. channels' dispatch loop cancels the receives it is waiting on when a
    consumer ends, but not the one whose message was being handled when a handler raised
    or was cancelled: that channel stayed subscribed for the life of the process, its
    queue filling with every later event of its groups (docs/realtime.md, "Limits"). The
    in-memory layer drops an empty channel's queue itself; this drops a non-empty one.

    Reaches into the layers' own state: tests/lmix/test_sockets_live.py counts the
    subscriptions left on Redis, so a channels_redis that changes it fails there.
    """
    get_layer = getattr(layer, "_get_layer", None)  # pub/sub: one layer per event loop
    inner = get_layer() if get_layer is not None else layer
    channels = getattr(inner, "channels", None)
    if not isinstance(channels, dict) or channel not in channels:
        return
    del channels[channel]
    get_shard = getattr(inner, "_get_shard", None)
    if get_shard is not None:
        await get_shard(channel).unsubscribe(channel)
