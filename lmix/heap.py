"""How long-running processes keep garbage collection off their requests' path.

- Every such process freezes the objects it starts with, so full collections skip them.
  A full collection walks every tracked object: in a Django process that is every module,
  model, URL pattern and template, most of the heap, alive until the process ends anyway.
  Measured under `make bench`, such a pause stopped the web process or the worker for
  75–190 ms, the whole of the commit latency's p99 tail. Frozen, a full collection walks
  only what was created since (requests, sockets, passes).
- The web process collects at quiet moments, on its event loop (`QuietCollector`). Left to
  itself, Python collects in whichever thread allocates when a threshold is crossed: in
  the web process that is a request's thread in the middle of a commit, which then waits
  for the whole collection (full ones took 30–136 ms under `make bench`, with 200 sockets
  open), and the objects of the requests in flight are promoted to older generations,
  which makes full collections come sooner.
"""

import asyncio
import gc
import time


def freeze_startup_objects() -> None:
    """Call once a process has loaded everything it serves with, just before it serves."""
    gc.collect()  # what startup left as garbage goes now, not frozen forever
    gc.freeze()


def due_generation() -> int | None:
    """The oldest generation Python's own thresholds would collect now, if any."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    for generation in (2, 1, 0):
        if counts[generation] > thresholds[generation]:
            return generation
    return None


class QuietCollector:
    """Collects garbage on the event loop when no request is being answered and no socket
    message has been handled for `quiet` seconds; when the process never goes quiet, at
    least every `overdue` seconds, so the heap stays bounded. Python's automatic
    collection is off meanwhile; its thresholds still say which generation is due.
    """

    def __init__(self, *, tick: float = 0.05, quiet: float = 0.02, overdue: float = 1.0):
        self.tick, self.quiet, self.overdue = tick, quiet, overdue
        self.requests = 0  # being answered now
        self.active_at = 0.0  # the last socket message handled (monotonic)
        self.collected_at = time.monotonic()
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        gc.disable()
        self._loop = loop
        loop.call_soon(self._check)

    def stop(self) -> None:
        self._loop = None
        gc.enable()

    def is_quiet(self, now: float) -> bool:
        return self.requests == 0 and now - self.active_at >= self.quiet

    def collect(self, now: float) -> int | None:
        """Collect the due generation if the moment allows; returns it."""
        if not (self.is_quiet(now) or now - self.collected_at >= self.overdue):
            return None
        self.collected_at = now
        generation = due_generation()
        if generation is not None:
            gc.collect(generation)
        return generation

    def _check(self) -> None:
        if self._loop is None:
            return
        self.collect(time.monotonic())
        self._loop.call_later(self.tick, self._check)


# The web process's collector (`manage.py serve`): its requests and sockets report to it.
collector = QuietCollector()
