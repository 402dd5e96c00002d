"""The text of one streaming run as its readers get it: numbered deltas, published in
batches, and checkpoints that hold exactly the deltas published.

A provider may send hundreds of tiny deltas a second; every one would be a message through
the channel layer to each reader's socket. The first delta of a run goes out at once (the
first words are what a reader waits for); after it, what arrives within
LMIX_STREAM_BATCH_SECONDS of the last one published goes out with the next as one delta.
The text is written to the database at most every LMIX_STREAM_CHECKPOINT_SECONDS and at the
end, never per delta, with `token_count`, the number of deltas it holds: a reader who loads
it mid-stream drops the deltas below that index.
"""

import time

from django.conf import settings


class TextStream:
    """Subclasses say how a delta is published (`publish`) and how the text is stored
    (`store`, False once the run no longer owns what it writes)."""

    def __init__(self, *, text: str = "", index: int = 0) -> None:
        self.parts: list[str] = [text] if text else []  # published, in order
        self.pending: list[str] = []  # arrived, not yet published
        self.index = index  # the deltas published so far (a continuation goes on)
        self.published_at: float | None = None
        self.saved_at = time.monotonic()

    @property
    def text(self) -> str:
        """What has been published."""
        return "".join(self.parts)

    def add(self, delta: str) -> bool:
        """Keep `delta`, publish what is due; False once the run no longer owns its text."""
        self.pending.append(delta)
        now = time.monotonic()
        due = self.published_at is None or (
            now - self.published_at >= settings.LMIX_STREAM_BATCH_SECONDS
        )
        if due:
            self.flush()
        if now - self.saved_at >= settings.LMIX_STREAM_CHECKPOINT_SECONDS:
            return self.checkpoint()
        return True

    def flush(self) -> None:
        """Publish whatever is waiting, as one delta."""
        if not self.pending:
            return
        delta = "".join(self.pending)
        self.pending.clear()
        self.publish(self.index, delta)
        self.parts.append(delta)
        self.index += 1
        self.published_at = time.monotonic()

    def checkpoint(self) -> bool:
        """Publish what is waiting and store the text; False once the run lost it."""
        self.flush()
        self.saved_at = time.monotonic()
        return self.store(self.text, self.index)

    def publish(self, index: int, delta: str) -> None:
        raise NotImplementedError

    def store(self, text: str, index: int) -> bool:
        raise NotImplementedError
