"""Waiting for background work to reach a state (a bound on waiting, not a speed assertion)."""

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(probe: Callable[[], T], timeout: float = 30, interval: float = 0.05) -> T:
    """Call `probe` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting after {timeout}s; last value {value!r}")
        time.sleep(interval)


async def receive_until(communicator, kind: str, timeout: float = 30) -> list[dict]:
    """Every message a socket receives up to and including the first of type `kind`."""
    messages = []
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(
                f"no {kind} within {timeout}s; got {[m['type'] for m in messages]}"
            )
        try:
            message = await communicator.receive_json_from(timeout=remaining)
        except TimeoutError:
            continue
        messages.append(message)
        if message["type"] == kind:
            return messages
