"""The usage meter (lmix/llm/meter.py): per-key calls and tokens over a sliding minute, in
the cache; a cache that fails never fails the model call it counts."""

import pytest

from lmix.llm import meter
from lmix.llm.base import Message
from lmix.llm.client import llm_complete
from lmix.models import LLMCall, LLMModel

NOON = 1_800_000_000.0  # a minute's start


@pytest.fixture
def at(monkeypatch):
    now = {"t": NOON}
    monkeypatch.setattr(meter, "clock", lambda: now["t"])
    return now


def test_the_minute_slides_over_the_last_one(at):
    meter.meter_add("k", calls=10, tokens=1000)
    assert (meter.meter_read("k").calls, meter.meter_read("k").tokens) == (10, 1000)
    at["t"] = NOON + 60 + 15  # a quarter into the next minute: three quarters still count
    meter.meter_add("k", calls=1)
    assert meter.meter_read("k").calls == 1 + 7
    assert meter.meter_read("k").rolls_in == 45
    at["t"] = NOON + 120
    assert meter.meter_read("k").calls == 1  # the first minute no longer counts
    assert meter.meter_read("other").calls == 0


@pytest.mark.django_db
def test_a_broken_cache_counts_nothing_and_fails_no_call(user, at, monkeypatch, settings):
    settings.LMIX_LLM_BUDGET_KEY = ""  # no resolver: counted nowhere, asked nothing
    meter._resolver.cache_clear()
    assert meter.budget_key("pass:whatever") is None
    settings.LMIX_LLM_BUDGET_KEY = "tests.llm.test_meter.everything_counts"
    meter._resolver.cache_clear()

    class Down:
        def __getattr__(self, name):
            def broken(*args, **kwargs):
                raise ConnectionError("the cache is down")

            return broken

    monkeypatch.setattr(meter, "cache", Down())
    model = LLMModel.objects.get(owner=user, provider="offline")
    answer = llm_complete(
        model=model, messages=[Message("user", "Hello.")], purpose="test", subject="x:1"
    )
    assert answer.text and LLMCall.objects.filter(subject="x:1").count() == 1
    assert meter.meter_read("everything").calls == 0
    meter._resolver.cache_clear()


def everything_counts(subject: str) -> str:
    return "everything"
