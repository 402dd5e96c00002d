"""lmix/answers.py: a REST answer is sent as its declared shape says, or not at all."""

import pydantic
import pytest

from lmix.answers import answer
from synthesis.answers import FrameBans, InviteCode, PassAccepted
from synthesis.event_types import LiquidBody

LIQUID = {
    "id": "l1",
    "seat": "s1",
    "author": None,
    "status": "submitted",
    "revision": 1,
    "submitted_at": "2026-01-01T00:00:00+00:00",
    "committed_at": None,
    "pscale": None,
    "window_seconds": None,
    "interruptive": False,
    "targets": [],
    "capable": None,
    "analysis_source": "",
    "held": False,
    "face": "player",
    "result": None,
}


def test_an_optional_key_not_given_stays_out_and_one_given_is_sent():
    hidden = answer(LiquidBody, LIQUID)
    shown = answer(LiquidBody, {**LIQUID, "content": "I climb", "refined": "Climbs"}, 201)
    assert "content" not in hidden.data and "refined" not in hidden.data
    assert (shown.data["content"], shown.status_code) == ("I climb", 201)


@pytest.mark.parametrize(
    ("shape", "data"),
    [
        (InviteCode, {"invite_code": "abc", "spectator_code": "leaked"}),  # undeclared key
        (PassAccepted, {"id": "p1", "status": "lost"}),  # not one of its statuses
        (PassAccepted, {"id": "p1"}),  # a required key missing
        (FrameBans, [{"user": "2", "player": "bob", "banned_at": "x"}]),  # no coercion
    ],
)
def test_an_answer_off_its_shape_is_refused_not_sent(shape, data):
    with pytest.raises(pydantic.ValidationError):
        answer(shape, data)


def test_a_list_answer_is_sent_as_a_list():
    bans = [{"user": 2, "player": "bob", "banned_at": "2026-01-01T00:00:00+00:00"}]
    assert answer(FrameBans, bans).data == bans
