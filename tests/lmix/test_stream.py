"""TextStream: the first delta at once, then batches of what arrives close together;
a checkpoint publishes what waits and stores exactly the deltas published."""

import pytest

from lmix.realtime import stream
from lmix.realtime.stream import TextStream


class Recorded(TextStream):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.published: list[tuple[int, str]] = []
        self.stored: list[tuple[str, int]] = []
        self.owned = True

    def publish(self, index: int, delta: str) -> None:
        self.published.append((index, delta))

    def store(self, text: str, index: int) -> bool:
        self.stored.append((text, index))
        return self.owned


@pytest.fixture
def clock(monkeypatch, settings):
    settings.LMIX_STREAM_BATCH_SECONDS = 0.05
    settings.LMIX_STREAM_CHECKPOINT_SECONDS = 1.0
    now = [100.0]
    monkeypatch.setattr(stream.time, "monotonic", lambda: now[0])
    return now


def test_the_first_delta_goes_at_once_and_later_ones_in_batches(clock):
    text = Recorded()
    assert text.add("One")
    clock[0] += 0.01
    text.add(" two")
    clock[0] += 0.01
    text.add(" three")
    assert text.published == [(0, "One")]  # two and three wait for the batch
    clock[0] += 0.04  # 50 ms after the last publish
    text.add(" four")
    assert text.published == [(0, "One"), (1, " two three four")]
    assert text.text == "One two three four" and text.index == 2


def test_a_checkpoint_publishes_what_waits_and_stores_exactly_that(clock):
    text = Recorded()
    text.add("A")
    clock[0] += 0.01
    text.add("B")
    assert text.checkpoint()
    assert text.published == [(0, "A"), (1, "B")]
    assert text.stored == [("AB", 2)]


def test_the_checkpoint_interval_stores_on_its_own_and_reports_a_lost_run(clock):
    text = Recorded()
    text.add("A")
    text.owned = False
    clock[0] += 0.5
    assert text.add("B")  # not yet due
    clock[0] += 0.5
    assert not text.add("C")  # due: stored, and the run no longer owns its text
    assert text.stored == [("ABC", 3)]


def test_a_continuation_goes_on_from_its_text_and_index(clock):
    text = Recorded(text="Before.", index=7)
    text.add(" After.")
    assert text.published == [(7, " After.")]
    text.checkpoint()
    assert text.stored == [("Before. After.", 8)]
