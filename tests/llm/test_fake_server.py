"""The fake LLM server itself: defaults, CORS, scripting hooks, and the standalone mode."""

import json
import subprocess
import sys
from pathlib import Path

import httpx

from tests.fakes.llm_server import DEFAULT_TEXT, LLAMA_CPP_REFUSES, FakeLLMServer, Reply

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_and_cors(fake_llm):
    with httpx.Client(base_url=fake_llm.base_url) as http:
        preflight = http.options("/models", headers={"Origin": "http://localhost:5173"})
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == "*"
        assert preflight.headers["access-control-allow-headers"] == "*"
        models = http.get("/models")
        assert models.headers["access-control-allow-origin"] == "*"
        assert [m["id"] for m in models.json()["data"]] == fake_llm.models
        chat = http.post("/chat/completions", json={"model": "m", "messages": []}).json()
        assert chat["choices"][0]["message"]["content"] == DEFAULT_TEXT
        structured = {"type": "json_schema", "json_schema": {"name": "X", "schema": {}}}
        body = {"model": "m", "messages": [], "response_format": structured}
        chat = http.post("/chat/completions", json=body).json()
        assert chat["choices"][0]["message"]["content"] == "{}"
    assert [r.method for r in fake_llm.requests] == ["GET", "POST", "POST"]  # not OPTIONS


def test_responder_answers_when_nothing_is_queued(fake_llm):
    fake_llm.responder = lambda request: Reply(text=f"echo {len(request.body['messages'])}")
    fake_llm.queue(text="queued first")
    with httpx.Client(base_url=fake_llm.base_url) as http:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        first = http.post("/chat/completions", json=body).json()
        second = http.post("/chat/completions", json=body).json()
    assert first["choices"][0]["message"]["content"] == "queued first"
    assert second["choices"][0]["message"]["content"] == "echo 1"


def test_context_manager_stops_the_server():
    with FakeLLMServer() as server:
        url = server.base_url
        assert httpx.get(f"{url}/models").status_code == 200
    try:
        httpx.get(f"{url}/models", timeout=0.5)
    except httpx.TransportError:
        pass
    else:
        raise AssertionError("the server still answers after stop()")


def test_standalone_mode_prints_its_url_and_serves():
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.llm_server", "--port", "0", "--text", "Standalone."],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline().strip()
        assert line.startswith("LISTENING http://127.0.0.1:")
        base_url = line.split(" ", 1)[1]
        assert base_url.endswith("/v1")
        body = {"model": "m", "messages": [], "stream": True}
        with httpx.stream("POST", f"{base_url}/chat/completions", json=body) as response:
            events = [line for line in response.iter_lines() if line.startswith("data: ")]
        assert events[-1] == "data: [DONE]"
        pieces = [json.loads(e[6:])["choices"][0]["delta"].get("content") for e in events[:-1]]
        assert "".join(p for p in pieces if p) == "Standalone."
    finally:
        process.terminate()
        process.wait(timeout=5)


def test_it_can_answer_like_llama_cpp(fake_llm):
    fake_llm.refused_formats = LLAMA_CPP_REFUSES
    fake_llm.queue(text='{"a": 1}')
    schema = {"type": "json_schema", "json_schema": {"name": "X", "schema": {}}}
    with httpx.Client(base_url=fake_llm.base_url) as http:
        chat = {"model": "m", "messages": []}
        refused = http.post("/chat/completions", json={**chat, "response_format": schema})
        assert refused.status_code == 500
        grammar = {"type": "json_object", "schema": {"type": "object"}}
        taken = http.post("/chat/completions", json={**chat, "response_format": grammar}).json()
        assert taken["choices"][0]["message"]["content"] == '{"a": 1}'  # what was queued
        assert http.post(f"{fake_llm.root_url}/chat/completions", json=chat).status_code == 404


def test_with_slots_it_answers_as_many_at_once_as_llama_cpp_and_says_so():
    import threading
    import time

    with FakeLLMServer() as server:
        server.total_slots = 1
        held, most = 0, 0
        lock = threading.Lock()

        def answer(request) -> Reply:
            nonlocal held, most
            with lock:
                held += 1
                most = max(most, held)
            time.sleep(0.3)
            with lock:
                held -= 1
            return Reply(text="yes")

        server.responder = answer
        body = {"model": "fake-gpt", "messages": [{"role": "user", "content": "hi"}]}
        ask = lambda: httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10)  # noqa: E731
        threads = [threading.Thread(target=ask) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert len(server.requests) == 3 and most == 1  # one at a time, the rest queued
        props = httpx.get(f"{server.root_url}/props", timeout=5).json()
        assert props["total_slots"] == 1
