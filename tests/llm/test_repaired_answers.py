"""A structured answer whose only fault is numbers out of range is repaired, not refused:
clamped, accepted at once and the repair noted on its try; an answer that cannot be read
is still sent back once, then fails (lmix/llm/negotiation.py, structured.validate)."""

import json

import pytest
from pydantic import BaseModel, Field

from lmix.llm.base import LLMInvalidOutput, Message
from lmix.llm.client import llm_structured
from lmix.models import LLMCall

pytestmark = pytest.mark.django_db
MESSAGES = [Message("system", "You size actions."), Message("user", "I wait by the door.")]


class Sizing(BaseModel):
    window_seconds: float = Field(gt=0, le=3600)
    level: int = Field(ge=1, le=10)


@pytest.fixture(autouse=True)
def quick(settings, monkeypatch):
    settings.LLM_MAX_RETRIES = 0
    settings.LLM_TIMEOUT_SECONDS = 5


def size(model, tries: list[dict]) -> Sizing:
    return llm_structured(model=model, messages=MESSAGES, schema=Sizing, purpose="t", tries=tries)


def test_numbers_out_of_range_are_clamped_and_noted_not_refused(fake_llm, model_for):
    fake_llm.queue(data={"window_seconds": 10000, "level": 12})
    tries: list[dict] = []

    assert size(model_for(), tries) == Sizing(window_seconds=3600, level=10)

    assert len(fake_llm.requests) == 1  # no repair round trip
    (accepted,) = tries
    assert accepted["error"] == ""
    assert json.loads(accepted["raw"]) == {"window_seconds": 10000, "level": 12}
    assert accepted["repaired"] == [
        {"path": "window_seconds", "given": 10000, "used": 3600.0},
        {"path": "level", "given": 12, "used": 10},
    ]
    assert LLMCall.objects.get().error == ""


def test_a_window_of_zero_takes_the_smallest_whole_second(fake_llm, model_for):
    fake_llm.queue(data={"window_seconds": 0, "level": 3})
    tries: list[dict] = []
    assert size(model_for(), tries).window_seconds == 1.0
    assert tries[0]["repaired"] == [{"path": "window_seconds", "given": 0, "used": 1.0}]


def test_a_clean_answer_has_no_repairs_on_its_try(fake_llm, model_for):
    fake_llm.queue(data={"window_seconds": 30, "level": 3})
    tries: list[dict] = []
    size(model_for(), tries)
    assert "repaired" not in tries[0]


def test_an_unreadable_answer_is_sent_back_once_then_fails(fake_llm, model_for):
    # An out-of-range number beside it does not rescue it; the repair asks about the rest.
    fake_llm.queue(data={"window_seconds": 10000, "level": "high"})
    fake_llm.queue(text="I think about an hour.")
    tries: list[dict] = []

    with pytest.raises(LLMInvalidOutput):
        size(model_for(), tries)

    assert len(fake_llm.requests) == 2
    first, second = tries
    assert first["error"].startswith("level: ") and "repaired" not in first
    assert second["error"] and "repaired" not in second
    repair = fake_llm.requests[1].body["messages"][-1]["content"]
    assert "level" in repair and "less than or equal to 3600" not in repair


def test_a_repair_that_comes_back_out_of_range_is_clamped_too(fake_llm, model_for):
    fake_llm.queue(data={"window_seconds": 90})  # level missing: a failure
    fake_llm.queue(data={"window_seconds": 90, "level": 0})
    tries: list[dict] = []
    assert size(model_for(), tries) == Sizing(window_seconds=90, level=1)
    assert [t["error"] != "" for t in tries] == [True, False]
    assert tries[1]["repaired"] == [{"path": "level", "given": 0, "used": 1}]
