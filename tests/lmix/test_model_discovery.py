"""Context size discovery (lmix/llm/discovery.py): asked of the model's server when a model
is added, tested or moved, stored in `config.context_size`, and asked of its owner otherwise."""

import logging

import httpcore2
import pytest

from lmix.llm.discovery import context_size_discover, context_sizes_discover
from lmix.models import LLMModel
from tests.factories import LLMModelFactory
from tests.fakes.llm_server import FakeLLMServer

pytestmark = pytest.mark.django_db
KEY = "sk-DISCOVERY-never-logged-4410"
CLOSED = "http://127.0.0.1:9/v1"  # the discard port: nothing listens


@pytest.fixture
def server():
    with FakeLLMServer(models=["smol"]) as fake:
        yield fake


# -- the probes ------------------------------------------------------------------------------


def test_llama_cpp_reports_its_context_at_props(server):
    server.context_size = 4096
    assert context_size_discover("openai_compatible", server.base_url, "", "smol") == 4096
    assert [r.path for r in server.requests] == ["/props"]


def test_a_top_level_n_ctx_in_props_is_read_too(server):
    server.queue(body={"n_ctx": 2048, "default_generation_settings": {}}, path="/props")
    assert context_size_discover("openai_compatible", server.base_url, "", "smol") == 2048


def test_without_props_the_model_list_meta_is_read(server):
    server.queue(status=404, path="/props")
    listing = {
        "object": "list",
        "data": [
            {"id": "other", "object": "model", "meta": {"n_ctx_train": 131072}},
            {"id": "smol", "object": "model", "meta": {"n_ctx_train": 8192, "n_ctx": 3072}},
        ],
    }
    server.queue(body=listing, path="/models")
    assert context_size_discover("openai_compatible", server.base_url, "", "smol") == 3072


def test_ollama_reports_the_trained_window_or_the_num_ctx_it_runs_with(server):
    server.context_size = 32768
    endpoint = server.root_url  # Ollama's root: its OpenAI API is under /v1
    assert context_size_discover("ollama", endpoint, "", "qwen2.5:7b") == 32768
    (show,) = server.requests_to("/api/show")
    assert show.method == "POST" and show.body == {"model": "qwen2.5:7b"}

    shown = {
        "parameters": 'num_ctx                        6144\nstop "<|im_end|>"',
        "model_info": {"qwen2.context_length": 32768},
    }
    server.queue(body=shown, path="/api/show")
    assert context_size_discover("ollama", endpoint, "", "qwen2.5:7b") == 6144


def test_a_server_that_says_nothing_usable_is_unknown(server):
    # No /props, /models without meta, no /api/show, no llama-cpp-python tokenizer route.
    assert context_size_discover("openai_compatible", server.base_url, "", "smol") is None
    paths = {r.path for r in server.requests}
    assert paths == {"/props", "/v1/models", "/api/show", "/extras/tokenize/count"}
    for odd in ({"n_ctx": 0}, {"n_ctx": "lots"}, {"n_ctx": True}, [4096], {"n_ctx": 10**9}):
        server.reset()
        server.queue(body=odd, path="/props")
        assert context_size_discover("openai_compatible", server.base_url, "", "x") is None


def test_llama_cpp_pythons_window_comes_from_its_refusal_of_an_over_long_prompt(server):
    server.queue(body={"count": 1}, path="/extras/tokenize/count")
    refusal = {
        "error": {
            "message": "This model's maximum context length is 4096 tokens. However, you "
            "requested 300032 tokens (300031 in the messages, 1 in the completion).",
            "code": "context_length_exceeded",
        }
    }
    server.queue(status=400, body=refusal, path="/v1/chat/completions")
    assert context_size_discover("openai_compatible", server.base_url, "", "smol") == 4096
    (probe,) = server.requests_to("/chat/completions")
    assert probe.body["max_tokens"] == 1 and len(probe.body["messages"][0]["content"]) > 500_000


def test_the_over_long_prompt_goes_only_to_a_server_with_llama_cpp_pythons_tokenizer(server):
    assert context_size_discover("openai_compatible", server.base_url, "", "smol") is None
    assert not server.requests_to("/chat/completions")


def test_hosted_models_come_from_the_table_without_a_request():
    assert context_size_discover("openai", "http://127.0.0.1:9/v1", KEY, "gpt-4o-mini") == 128_000
    assert context_size_discover("anthropic", CLOSED, KEY, "claude-sonnet-4-5") == 200_000
    # An unknown hosted id and the offline narrator are not guessed at.
    assert context_size_discover("openai", CLOSED, KEY, "ft:my-own-model") is None
    assert context_size_discover("offline", "offline://narrator", "", "narrator") is None


def test_a_server_that_does_not_answer_is_asked_once_per_batch(monkeypatch):
    attempts: list[str] = []

    def connect_tcp(self, host, port, *args, **kwargs):
        attempts.append(f"{host}:{port}")
        raise httpcore2.ConnectError("down")

    monkeypatch.setattr(httpcore2.SyncBackend, "connect_tcp", connect_tcp)
    sizes = context_sizes_discover([("ollama", CLOSED, "", f"m{i}") for i in range(20)])
    assert sizes == [None] * 20
    assert attempts == ["127.0.0.1:9"]


def test_the_endpoint_policy_applies_to_the_probes(server, settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public"]
    server.context_size = 4096
    assert context_size_discover("openai_compatible", server.base_url, "", "smol") is None
    assert server.requests == []


def test_the_key_goes_to_the_server_and_never_to_the_log(server, caplog):
    caplog.set_level(logging.DEBUG)
    server.context_size = 4096
    assert context_size_discover("openai_compatible", server.base_url, KEY, "smol") == 4096
    assert server.requests[0].api_key == KEY
    assert KEY not in caplog.text


# -- stored on create and test ---------------------------------------------------------------


def test_a_created_model_stores_the_context_size_its_server_reports(api, server):
    server.context_size = 4096
    created = api.post(
        "/api/models", {"api_endpoint": server.base_url, "model_id": "smol"}, format="json"
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["config"] == {"context_size": 4096, "context_size_discovered": True}
    assert body["context_size_unknown"] is False


def test_a_typed_context_size_is_kept_and_the_server_not_asked(api, server):
    server.context_size = 4096
    created = api.post(
        "/api/models",
        {"api_endpoint": server.base_url, "model_id": "smol", "config": {"context_size": 1024}},
        format="json",
    )
    assert created.json()["config"] == {"context_size": 1024}
    assert server.requests == []


def test_a_bulk_add_stores_each_models_own_size(api, server):
    server.context_size = 16384
    created = api.post(
        "/api/models",
        [
            {"api_endpoint": server.root_url, "model_id": "a", "provider": "ollama"},
            {"api_endpoint": server.root_url, "model_id": "b", "provider": "ollama"},
        ],
        format="json",
    )
    assert created.status_code == 201, created.content
    assert [m["config"]["context_size"] for m in created.json()] == [16384, 16384]
    assert [r.body["model"] for r in server.requests_to("/api/show")] == ["a", "b"]


def test_a_local_server_that_does_not_say_leaves_it_to_the_owner(api, server):
    created = api.post(
        "/api/models", {"api_endpoint": server.base_url, "model_id": "smol"}, format="json"
    )
    assert created.json()["config"] == {}
    assert created.json()["context_size_unknown"] is True
    hosted = api.post(
        "/api/models",
        {"api_endpoint": "https://api.openai.com/v1", "model_id": "ft:mine"},
        format="json",
    )
    assert hosted.json()["context_size_unknown"] is False  # a hosted model: not asked


def test_the_connection_test_reports_the_context_size(api, server):
    server.context_size = 4096
    tested = api.post(
        "/api/models/test",
        {"api_endpoint": server.base_url, "model_id": "smol"},
        format="json",
    ).json()
    assert tested["ok"] is True and tested["context_size"] == 4096
    assert "context_size_hint" not in tested

    server.context_size = None
    unknown = api.post(
        "/api/models/test", {"api_endpoint": server.base_url, "model_id": "smol"}, format="json"
    ).json()
    assert unknown["ok"] is True and unknown["context_size"] is None
    assert "did not report its context size" in unknown["context_size_hint"]

    failed = api.post("/api/models/test", {"api_endpoint": CLOSED}, format="json").json()
    assert failed["ok"] is False and failed["context_size"] is None
    assert "context_size_hint" not in failed  # nothing was reached to ask


def test_testing_a_saved_model_stores_the_size_unless_its_owner_typed_one(api, user, server):
    model = LLMModelFactory(owner=user, api_endpoint=server.base_url, model_id="smol", config={})
    server.context_size = 4096
    tested = api.post("/api/models/test", {"id": str(model.id)}, format="json").json()
    assert tested["context_size"] == 4096
    model.refresh_from_db()
    assert model.config == {"context_size": 4096, "context_size_discovered": True}

    server.context_size = 8192  # the server restarted with a larger window
    api.post("/api/models/test", {"id": str(model.id)}, format="json")
    model.refresh_from_db()
    assert model.config["context_size"] == 8192

    model.config = {"context_size": 2048}
    model.save()
    api.post("/api/models/test", {"id": str(model.id)}, format="json")
    model.refresh_from_db()
    assert model.config == {"context_size": 2048}


# -- re-probed on edit -----------------------------------------------------------------------


def _patch(api, model: LLMModel, data: dict) -> dict:
    response = api.patch(f"/api/models/{model.id}", data, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_moving_a_model_forgets_its_structured_mode_and_rediscovers_its_context(api, user, server):
    server.context_size = 2048
    model = LLMModelFactory(
        owner=user,
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="smol",
        config={
            "structured_mode": "json_object",
            "context_size": 4096,
            "context_size_discovered": True,
            "temperature": 0.5,
        },
    )
    # A rename is no move: nothing is probed or forgotten.
    assert _patch(api, model, {"name": "Renamed"})["config"]["structured_mode"] == "json_object"
    assert server.requests == []

    # The form sends the config back as it got it, with another model id.
    body = _patch(api, model, {"model_id": "bigger", "config": body_config(model)})
    assert body["config"] == {
        "temperature": 0.5,
        "context_size": 2048,
        "context_size_discovered": True,
    }


def body_config(model: LLMModel) -> dict:
    model.refresh_from_db()
    return dict(model.config)


def test_a_move_keeps_a_mode_the_same_edit_chooses_and_a_typed_context_size(api, user, server):
    server.context_size = 2048
    model = LLMModelFactory(
        owner=user,
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="smol",
        config={"structured_mode": "json_schema", "context_size": 4096},
    )
    body = _patch(
        api,
        model,
        {"model_id": "other", "config": {"structured_mode": "prompt", "context_size": 4096}},
    )
    assert body["config"] == {"structured_mode": "prompt", "context_size": 4096}
    assert server.requests == []  # a typed size is not asked about


def test_typing_over_a_discovered_size_makes_it_the_owners(api, user, server):
    server.context_size = 2048
    model = LLMModelFactory(
        owner=user,
        provider="openai_compatible",
        api_endpoint=server.base_url,
        model_id="smol",
        config={"context_size": 4096, "context_size_discovered": True},
    )
    assert _patch(api, model, {"config": {"context_size": 3000, "context_size_discovered": True}})[
        "config"
    ] == {"context_size": 3000}
    # Moved later, the owner's size stays.
    assert _patch(api, model, {"model_id": "other"})["config"] == {"context_size": 3000}
