"""Parsing a model's text as a schema: fences, chatter, and the repair request."""

import pytest
from pydantic import BaseModel

from lmix.llm import structured
from lmix.llm.base import Message


class Answer(BaseModel):
    ok: bool


@pytest.mark.parametrize(
    "text",
    [
        '{"ok": true}',
        '```json\n{"ok": true}\n```',
        '```\n{"ok": true}\n```',
        'Sure! Here it is: {"ok": true} Hope that helps.',
    ],
)
def test_parse_tolerates_fences_and_chatter(text):
    assert structured.parse(text, Answer) == Answer(ok=True)


class Said(BaseModel):
    line: str


def test_parse_takes_raw_newlines_and_tabs_inside_strings():
    # What SmolLM2 wrote under llama.cpp's grammar: a strict parser refuses it.
    assert structured.parse('{"line": "I open\nthe\tdoor"}', Said) == Said(line="I open\nthe\tdoor")


def test_parse_failure_carries_the_raw_text_and_the_reason():
    with pytest.raises(structured.Unparsable) as caught:
        structured.parse('{"ok": "perhaps"}', Answer)
    assert caught.value.raw == '{"ok": "perhaps"}'
    assert "ok" in caught.value.detail


def test_repair_sends_back_the_answer_and_the_problem():
    messages = [Message("user", "Is it ok?")]
    problem = structured.Unparsable("ok: Input should be a valid boolean", "{oops")
    retry = structured.repair(messages, problem)
    assert retry[:1] == messages
    assert retry[1] == Message("assistant", "{oops")
    assert retry[2].role == "user" and "valid boolean" in retry[2].content


def test_instruction_joins_the_system_message():
    out = structured.with_instruction([Message("system", "Rules."), Message("user", "Go")], Answer)
    assert [m.role for m in out] == ["system", "user"]
    assert out[0].content.startswith("Rules.") and '"ok"' in out[0].content
    assert structured.with_instruction([Message("user", "Go")], Answer)[0].role == "system"
