"""Numbers outside their fields' bounds are clamped into them when an answer is read
(lmix/llm/bounds.py through structured.parse), and each repair is reported; anything else
wrong with an answer stays a failure."""

from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from lmix.llm import structured


class Beat(BaseModel):
    level: int = Field(ge=1, le=10)
    share: float = Field(gt=0, lt=1)


class Plan(BaseModel):
    window_seconds: float = Field(gt=0, le=3600)
    steps: list[Annotated[int, Field(ge=0)]] = []
    beats: list[Beat] = []
    by_name: dict[str, Beat] = {}
    delay: float | None = Field(default=None, ge=0)
    count: int = Field(default=1, gt=0)
    note: str = Field(default="", max_length=5)


def read(text: str) -> tuple[Plan, list[dict]]:
    repairs: list[dict] = []
    return structured.parse(text, Plan, repairs), repairs


@pytest.mark.parametrize(
    ("given", "used"),
    [(10000, 3600.0), (3600.5, 3600.0), (0, 1.0), (-5, 1.0), (1e300, 3600.0)],
)
def test_a_window_out_of_range_is_clamped_to_the_nearest_value_inside(given, used):
    plan, repairs = read(f'{{"window_seconds": {given}}}')
    assert plan.window_seconds == used
    assert repairs == [{"path": "window_seconds", "given": given, "used": used}]


def test_an_answer_in_range_is_read_as_it_was_with_no_repair():
    plan, repairs = read('{"window_seconds": 3600, "count": 1}')
    assert plan.window_seconds == 3600 and repairs == []


def test_nested_models_lists_and_dicts_are_clamped_where_they_sit():
    text = (
        '{"window_seconds": 30, "steps": [-1, 2], "count": 0, "delay": -3,'
        ' "beats": [{"level": 12, "share": 0}], "by_name": {"k": {"level": 0, "share": 1.5}}}'
    )
    plan, repairs = read(text)
    assert plan.steps == [0, 2] and plan.count == 1 and plan.delay == 0
    assert plan.beats == [Beat(level=10, share=0.01)]
    assert plan.by_name == {"k": Beat(level=1, share=0.99)}
    assert {r["path"]: (r["given"], r["used"]) for r in repairs} == {
        "steps.0": (-1, 0),
        "count": (0, 1),  # an int field's exclusive bound: the next whole number
        "delay": (-3, 0.0),
        "beats.0.level": (12, 10),
        # A float's exclusive bound, in a range narrower than 100: 1% of it inside.
        "beats.0.share": (0, 0.01),
        "by_name.k.level": (0, 1),
        "by_name.k.share": (1.5, 0.99),
    }
    assert isinstance(plan.count, int) and isinstance(plan.beats[0].level, int)


def test_a_repaired_answer_keeps_the_answer_it_was_given_unchanged():
    given = {"window_seconds": 0}
    repairs: list[dict] = []
    assert structured.validate(given, Plan, repairs=repairs).window_seconds == 1.0
    assert given == {"window_seconds": 0} and len(repairs) == 1


@pytest.mark.parametrize(
    "text",
    [
        "not json at all",
        "{}",  # a required field missing
        '{"window_seconds": "soon"}',  # a number that cannot be read
        '{"window_seconds": NaN}',  # no bound places it
        '{"window_seconds": 30, "note": "far too long"}',  # text is not cut (lmix/llm/bounds.py)
    ],
)
def test_anything_but_a_number_out_of_range_is_still_a_failure(text):
    repairs: list[dict] = []
    with pytest.raises(structured.Unparsable):
        structured.parse(text, Plan, repairs)
    assert repairs == []


def test_a_failure_beside_a_clamped_number_names_only_what_is_still_wrong():
    with pytest.raises(structured.Unparsable) as caught:
        structured.parse('{"window_seconds": 10000, "count": "x"}', Plan)
    assert caught.value.summary.startswith("count: ")
    assert "window_seconds" not in caught.value.detail
    assert caught.value.raw == '{"window_seconds": 10000, "count": "x"}'
