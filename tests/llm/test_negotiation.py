"""Structured calls find the mode a model takes, remember it, and never send a refused shape."""

import json

import pytest
from pydantic import BaseModel, Field

from lmix.llm.base import LLMAuthError, LLMInvalidOutput, LLMUnavailable, Message
from lmix.llm.client import llm_structured
from lmix.models import OFFLINE_ENDPOINT, LLMCall, LLMModel
from tests.fakes.llm_server import LLAMA_CPP_REFUSES, Reply

pytestmark = pytest.mark.django_db
MESSAGES = [Message("system", "You judge."), Message("user", "Did Mira take the key?")]


class Verdict(BaseModel):
    guilty: bool
    reason: str = Field(max_length=200)  # a maxLength: what crashes llama.cpp in json_object


GOOD = {"guilty": True, "reason": "She had it."}


@pytest.fixture(autouse=True)
def quick(settings, monkeypatch):
    settings.LLM_MAX_RETRIES = 2
    settings.LLM_TIMEOUT_SECONDS = 5
    monkeypatch.setattr("lmix.llm.patience.BACKOFF_SECONDS", 0.01)


def formats(server) -> list[str]:
    """What each chat request asked for: its response_format type ("json_object+schema" with
    a schema inside), or "text"."""
    asked = [r.body.get("response_format") or {} for r in server.requests_to("/chat/completions")]
    return [f"{f.get('type', 'text')}{'+schema' if 'schema' in f else ''}" for f in asked]


def stored_mode(model: LLMModel) -> str | None:
    return LLMModel.objects.get(pk=model.pk).config.get("structured_mode")


def judge(model, **extra) -> Verdict:
    return llm_structured(model=model, messages=MESSAGES, schema=Verdict, purpose="t", **extra)


def test_a_llama_cpp_server_is_asked_once_for_json_schema_then_for_a_grammar(fake_llm, model_for):
    fake_llm.refused_formats = LLAMA_CPP_REFUSES
    model = model_for(config={"temperature": 0.5, "context_size": 4096})
    fake_llm.queue(data=GOOD)  # taken by the grammar request

    assert judge(model) == Verdict(**GOOD)

    # The 500 to json_schema is a refusal of that shape: not retried, the next mode asked.
    assert formats(fake_llm) == ["json_schema", "json_object+schema"]
    second = fake_llm.requests[1].body
    grammar = second["response_format"]["schema"]
    assert grammar["properties"]["reason"] == {"type": "string"}  # no maxLength: it crashed
    assert "title" not in json.dumps(grammar)
    assert '"guilty"' in second["messages"][0]["content"]  # the schema is in the prompt too
    config = LLMModel.objects.get(pk=model.pk).config
    assert config == {"temperature": 0.5, "context_size": 4096, "structured_mode": "grammar"}
    assert LLMCall.objects.get().error == ""


def test_a_remembered_mode_is_used_alone_and_a_refused_shape_never_sent_again(fake_llm, model_for):
    fake_llm.refused_formats = LLAMA_CPP_REFUSES
    model = model_for()
    fake_llm.queue(data=GOOD)
    judge(model)
    fake_llm.reset()
    fake_llm.refused_formats = LLAMA_CPP_REFUSES

    for _ in range(2):
        fake_llm.queue(data=GOOD)
        judge(LLMModel.objects.get(pk=model.pk))

    assert formats(fake_llm) == ["json_object+schema", "json_object+schema"]


def test_a_server_without_grammars_is_asked_for_a_json_object_with_no_schema_inside(
    fake_llm, model_for
):
    fake_llm.refused_formats = {"json_schema", "json_object+schema"}
    model = model_for()
    fake_llm.queue(data=GOOD)
    assert judge(model) == Verdict(**GOOD)
    assert formats(fake_llm) == ["json_schema", "json_object+schema", "json_object"]
    assert stored_mode(model) == "json_object"


def test_a_server_that_takes_no_json_mode_is_asked_with_the_prompt_alone(fake_llm, model_for):
    fake_llm.refused_formats = {"json_schema", "json_object+schema", "json_object"}
    model = model_for()
    fake_llm.queue(data=GOOD)
    assert judge(model) == Verdict(**GOOD)
    assert formats(fake_llm) == ["json_schema", "json_object+schema", "json_object", "text"]
    assert stored_mode(model) == "prompt"


def test_a_wire_schema_is_what_the_server_is_held_to(fake_llm, model_for):
    fake_llm.refused_formats = LLAMA_CPP_REFUSES
    wire = {"type": "object", "properties": {"guilty": {"enum": [True]}, "reason": {}}}
    fake_llm.queue(data=GOOD)
    judge(model_for(), wire=wire)
    sent = [r.body for r in fake_llm.requests_to("/chat/completions")]
    assert sent[0]["response_format"]["json_schema"]["schema"] == wire
    assert sent[1]["response_format"]["schema"] == wire
    assert json.dumps(wire) in sent[1]["messages"][0]["content"]


@pytest.mark.parametrize("status", [400, 404, 415, 422, 501])
def test_other_refusals_move_on_too(fake_llm, model_for, status):
    model = model_for()
    fake_llm.queue(status=status)
    fake_llm.queue(data=GOOD)
    assert judge(model) == Verdict(**GOOD)
    assert formats(fake_llm) == ["json_schema", "json_object+schema"]
    assert stored_mode(model) == "grammar"


def test_a_server_that_takes_json_schema_keeps_it(fake_llm, model_for):
    model = model_for()
    fake_llm.queue(data=GOOD)
    judge(model)
    assert formats(fake_llm) == ["json_schema"]
    assert stored_mode(model) == "json_schema"


def test_with_a_mode_remembered_a_server_error_is_a_failure_retried_not_a_refusal(
    fake_llm, model_for
):
    model = model_for(config={"structured_mode": "json_schema"})
    fake_llm.queue(status=500)
    fake_llm.queue(status=500)
    fake_llm.queue(status=500)
    with pytest.raises(LLMUnavailable):
        judge(model)
    assert formats(fake_llm) == ["json_schema"] * 3  # LLM_MAX_RETRIES = 2 retries
    assert stored_mode(model) == "json_schema"


def test_a_refused_key_while_probing_is_not_a_refused_shape(fake_llm, model_for):
    model = model_for()
    fake_llm.queue(status=401)
    with pytest.raises(LLMAuthError):
        judge(model)
    assert formats(fake_llm) == ["json_schema"]
    assert stored_mode(model) is None


def test_the_mode_is_merged_into_the_config_as_it_is_now(fake_llm, model_for):
    model = model_for(config={"temperature": 0.5})
    # Edited meanwhile (the form, a discovery): the instance in hand is stale.
    LLMModel.objects.filter(pk=model.pk).update(config={"temperature": 0.9, "context_size": 2048})
    fake_llm.queue(data=GOOD)
    judge(model)
    config = LLMModel.objects.get(pk=model.pk).config
    assert config == {"temperature": 0.9, "context_size": 2048, "structured_mode": "json_schema"}


def test_an_anthropic_model_uses_its_tool_and_the_tries_show_it(fake_llm, model_for):
    model = model_for("anthropic")
    fake_llm.queue(data=GOOD)
    tries: list[dict] = []
    assert judge(model, tries=tries) == Verdict(**GOOD)
    (only,) = tries
    assert only["mode"] == "tool" and only["error"] == ""
    assert json.loads(only["raw"]) == GOOD
    note = only["messages"][-1]
    assert note["role"] == "note" and '"input_schema"' in note["content"]
    assert [m["content"] for m in only["messages"][:-1]] == [m.content for m in MESSAGES]
    assert stored_mode(model) == "tool"


def test_the_offline_narrator_needs_no_negotiation(model_for, fake_llm):
    model = model_for("offline", api_endpoint=OFFLINE_ENDPOINT, model_id="narrator-9", api_key="")
    tries: list[dict] = []
    assert isinstance(judge(model, tries=tries), Verdict)
    assert [t["mode"] for t in tries] == ["native"]
    assert tries[0]["messages"] == [m.as_dict() for m in MESSAGES]  # no instruction added
    assert "structured_mode" not in LLMModel.objects.get(pk=model.pk).config
    assert fake_llm.requests == []


# -- what a call records, the budget ---------------------------------------------------------


def test_every_request_is_a_try_with_what_was_sent_and_answered(fake_llm, model_for):
    fake_llm.refused_formats = LLAMA_CPP_REFUSES
    fake_llm.queue(text='{"guilty": "maybe"}')
    fake_llm.queue(data=GOOD)
    tries: list[dict] = []
    judge(model_for(), tries=tries)

    refused, wrong, repaired = tries
    assert refused["mode"] == "json_schema" and refused["raw"] == ""
    assert "HTTP 500" in refused["error"]
    assert wrong["mode"] == repaired["mode"] == "grammar"
    assert wrong["raw"] == '{"guilty": "maybe"}'
    assert wrong["error"].startswith("guilty: ")  # one short line, not pydantic's whole text
    assert repaired["error"] == "" and json.loads(repaired["raw"]) == GOOD
    sent = [r.body["messages"] for r in fake_llm.requests_to("/chat/completions")]
    assert [t["messages"] for t in tries] == sent  # exactly as sent, the instruction included
    assert "JSON schema" in sent[0][0]["content"]


def test_a_check_refusal_is_repaired_once_with_its_reason(fake_llm, model_for):
    def innocent_only(verdict: Verdict) -> None:
        if verdict.guilty:
            raise ValueError("A verdict needs evidence: none was given.\nSecond line.")

    fake_llm.queue(data=GOOD)
    fake_llm.queue(data={"guilty": False, "reason": "No evidence."})
    tries: list[dict] = []
    result = judge(model_for(), check=innocent_only, tries=tries)
    assert result.guilty is False
    repair = fake_llm.requests[1].body["messages"]
    assert "A verdict needs evidence" in repair[-1]["content"]
    assert tries[0]["error"] == "A verdict needs evidence: none was given."
    assert tries[1]["error"] == ""


def test_a_check_refused_twice_fails_saying_why(fake_llm, model_for):
    def never(verdict: Verdict) -> None:
        raise ValueError("The verdict resolves nothing.")

    fake_llm.queue(data=GOOD)
    fake_llm.queue(data=GOOD)
    with pytest.raises(LLMInvalidOutput) as caught:
        judge(model_for(), check=never)
    assert str(caught.value) == (
        "The model's answer did not match the expected format: The verdict resolves nothing."
    )
    assert "You judge" not in str(caught.value)  # no prompt text
    assert len(fake_llm.requests) == 2


def test_an_empty_answer_is_a_failed_try(fake_llm, model_for):
    fake_llm.queue(text="  \n")
    fake_llm.queue(text="")
    tries: list[dict] = []
    with pytest.raises(LLMInvalidOutput, match="empty answer"):
        judge(model_for(), tries=tries)
    assert [t["error"] for t in tries] == ["empty answer", "empty answer"]


def test_the_budget_is_the_callers_unless_the_model_sets_one(fake_llm, model_for, settings):
    settings.LLM_STRUCTURED_MAX_TOKENS = 777
    fake_llm.responder = lambda request: Reply(data=GOOD)
    model = model_for(config={"max_tokens": 50})  # the prose budget is not the structured one
    judge(model)
    judge(model, max_tokens=300)
    judge(model, max_tokens=300, overrides={"max_tokens": 20})
    sized = model_for(
        name="Sized", config={"structured_max_tokens": 90, "structured_mode": "json_schema"}
    )
    judge(sized, max_tokens=300)
    bodies = [r.body for r in fake_llm.requests_to("/chat/completions")]
    assert [b["max_tokens"] for b in bodies] == [777, 300, 300, 90]
    assert not any({"structured_mode", "structured_max_tokens"} & set(b) for b in bodies)
