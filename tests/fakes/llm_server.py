"""A local HTTP server speaking the OpenAI and Anthropic wire formats, streaming included.

    with FakeLLMServer() as server:
        server.queue(status=429, headers={"retry-after-ms": "10"})
        server.queue(text="Hello there.")
        ...  # point a client at server.base_url ("http://127.0.0.1:PORT/v1")
        assert len(server.requests) == 2

Unscripted requests get a plausible default: `default_text` (streamed in several chunks when
the request asks for a stream), `{}` for structured requests, `models` for GET /v1/models.
Like real servers, it serves only under /v1 (a 404 elsewhere).

To behave like llama.cpp's server (llama-cpp-python 0.3.x), which answers a json_schema
response_format with a 500 (it compiles a schema inside json_object into a grammar, which
tests/real_models/ show on the real server):

    server.refused_formats = LLAMA_CPP_REFUSES

Text that is `""` makes a 200 with an empty stream (llama.cpp's answer to a prompt over its
context); `first_delay` holds the first piece back after the headers went out, and
`stall_after` pieces of text stop the stream for `stall` seconds (a server stopped
mid-answer).
Standalone, for browser tests: `python -m tests.fakes.llm_server --port 0` prints
`LISTENING <base_url>` and serves until killed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_TEXT = "The lamps gutter as the stranger steps inside. “We should talk,” she says quietly."
DEFAULT_MODELS = ("fake-gpt", "fake-claude", "fake-llama")
# The response formats llama-cpp-python's server answers with a 500: json_schema (it takes
# only text and json_object) and a json_object with a schema inside (its grammar compiler).
LLAMA_CPP_REFUSES = frozenset({"json_schema"})

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


@dataclass
class Reply:
    """One scripted answer. With nothing but `status`, an error body in the right format."""

    status: int = 200
    text: str | None = None  # a completion with this text, in the request's wire format
    data: Any = None  # structured: Anthropic tool_use input, or OpenAI content as JSON
    body: Any = None  # sent as is (dict/list as JSON, str as text); overrides the above
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering: for timeouts
    chunk_delay: float = 0.0  # seconds between streamed chunks
    drop: bool = False  # close the connection without answering: a dropped connection
    usage: bool = True  # report token usage in the answer
    path: str | None = None  # only answer requests whose path ends with this
    first_delay: float = 0.0  # streams: seconds between the headers and the first piece
    stall_after: int | None = None  # streams: pieces of text sent before stalling
    stall: float = 0.0  # ...for this many seconds (then the connection is cut)
    # streams: end with [DONE] but no finish reason, as llama-cpp-python's server cuts a
    # stream when another request arrives
    unfinished: bool = False


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, or None

    @property
    def api_key(self) -> str:
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ").strip() or self.headers.get("x-api-key", "")


def _chunks(text: str) -> list[str]:
    """A word (with its trailing space) per chunk, so streams arrive in several pieces."""
    return re.findall(r"\S+\s*|\s+", text) or [""]


def _usage_numbers(request: RecordedRequest, text: str) -> tuple[int, int]:
    body = request.body if isinstance(request.body, dict) else {}
    prompt = json.dumps(body.get("messages", [])) + json.dumps(body.get("system", ""))
    return max(1, len(prompt) // 4), max(1, len(text.split()))


class FakeLLMServer:
    """A scriptable OpenAI/Anthropic server on 127.0.0.1, in a background thread."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        default_text: str = DEFAULT_TEXT,
        models: tuple[str, ...] | list[str] = DEFAULT_MODELS,
    ) -> None:
        self.default_text = default_text
        self.models = list(models)
        # The context size GET /props (llama.cpp) and POST /api/show (Ollama) report; None:
        # those routes are 404, as on servers that have neither.
        self.context_size: int | None = None
        # As llama.cpp's slots: how many requests it answers at once, the rest waiting in
        # its own queue (GET /props says how many). None: every request at once.
        self.total_slots: int | None = None
        self._slots: threading.Semaphore | None = None
        # Consulted when nothing is queued: return a Reply, or None for the default.
        self.responder: Callable[[RecordedRequest], Reply | None] | None = None
        self.requests: list[RecordedRequest] = []
        self.emitted: list[tuple[float, float]] = []  # per OpenAI stream: first, last piece
        # Response formats answered with a 500: "json_schema", "json_object", "json_object+schema".
        self.refused_formats: frozenset[str] | set[str] = frozenset()
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    def _slot(self) -> threading.Semaphore:
        with self._lock:
            if self._slots is None:
                self._slots = threading.Semaphore(self.total_slots or 1)
            return self._slots

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def root_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def start(self) -> FakeLLMServer:
        # A short poll keeps stop() quick: shutdown() waits for the loop to notice.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a delay
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting -------------------------------------------------------------------------

    def queue(self, reply: Reply | None = None, /, **fields: Any) -> Reply:
        """Queue the answer to a coming request (first in, first out)."""
        reply = reply or Reply(**fields)
        with self._lock:
            self._replies.append(reply)
        return reply

    def requests_to(self, suffix: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith(suffix)]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._replies.clear()
        self.responder = None

    def _next_reply(self, request: RecordedRequest) -> Reply | None:
        with self._lock:
            self.requests.append(request)
            if _format(request) in self.refused_formats:
                return Reply(status=500)  # what was queued is for the next request
            for i, reply in enumerate(self._replies):
                if reply.path is None or request.path.endswith(reply.path):
                    return self._replies.pop(i)
        return self.responder(request) if self.responder else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a handler stuck in a delay must not hold up stop()
    fake: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client gone mid-stream
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # keep test output quiet

    # -- plumbing --------------------------------------------------------------------------

    def _cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "*")
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        is_text = isinstance(body, str)
        data = (body if is_text else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if is_text else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self._cors()
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self, headers: dict[str, str]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self._cors()
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def _write_chunk(self, data: str) -> None:
        raw = data.encode()
        self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _record(self) -> RecordedRequest:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        path = self.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in self.headers.items()}
        return RecordedRequest(self.command, path, headers, body)

    # -- HTTP methods ----------------------------------------------------------------------

    def do_OPTIONS(self) -> None:  # noqa: N802
        self.send_response(204)
        self._cors()
        self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802
        self._handle()

    def do_POST(self) -> None:  # noqa: N802
        self._handle()

    def _handle(self) -> None:
        fake = self.server.fake
        request = self._record()
        if fake.total_slots and request.path.startswith("/v1/"):
            with fake._slot():  # waits its turn, as in llama.cpp's own queue
                self._reply(fake, request)
        else:
            self._reply(fake, request)

    def _reply(self, fake: FakeLLMServer, request: RecordedRequest) -> None:
        reply = fake._next_reply(request) or Reply()
        if reply.delay and fake._stopping.wait(reply.delay):
            return
        if reply.drop:
            self.close_connection = True
            return
        try:
            self._answer(request, reply)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (a timeout test): fine

    def _answer(self, request: RecordedRequest, reply: Reply) -> None:
        path = request.path
        anthropic = path.endswith("/messages") or "anthropic-version" in request.headers
        if reply.body is not None:
            self._send(reply.status, reply.body, reply.headers)
        elif reply.status >= 400:
            self._send(reply.status, _error_body(reply.status, request, anthropic), reply.headers)
        elif path == "/props" and request.method == "GET" and self.server.fake.total_slots:
            body = _props_body(self.server.fake.context_size or 4096)
            self._send(200, {**body, "total_slots": self.server.fake.total_slots}, reply.headers)
        elif path == "/props" and request.method == "GET" and self.server.fake.context_size:
            self._send(200, _props_body(self.server.fake.context_size), reply.headers)
        elif path == "/api/show" and request.method == "POST" and self.server.fake.context_size:
            self._send(200, _show_body(self.server.fake.context_size, request), reply.headers)
        elif not path.startswith("/v1/"):
            self._send(404, _error_body(404, request, anthropic))
        elif path.endswith("/models") and request.method == "GET":
            self._send(200, _models_body(self.server.fake.models), reply.headers)
        elif path.endswith("/chat/completions") and request.method == "POST":
            self._openai(request, reply)
        elif path.endswith("/messages") and request.method == "POST":
            self._anthropic(request, reply)
        else:
            self._send(404, _error_body(404, request, anthropic))

    # -- OpenAI ----------------------------------------------------------------------------

    def _openai(self, request: RecordedRequest, reply: Reply) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        structured = isinstance(body.get("response_format"), dict) and body["response_format"].get(
            "type", "text"
        ).startswith("json")
        if reply.text is not None:
            text = reply.text
        elif reply.data is not None:
            text = json.dumps(reply.data)
        else:
            text = "{}" if structured else self.server.fake.default_text
        model = body.get("model", "fake")
        prompt, completion = _usage_numbers(request, text)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if not body.get("stream"):
            answer: dict[str, Any] = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
            }
            if reply.usage:
                answer["usage"] = usage
            self._send(200, answer, reply.headers)
            return

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": piece}) for piece in _chunks(text)]
        if not reply.unfinished:
            events.append(chunk({}, "stop"))
        if reply.usage and (body.get("stream_options") or {}).get("include_usage"):
            events.append({**chunk({}), "choices": [], "usage": usage})
        self._start_stream(reply.headers)
        stopping = self.server.fake._stopping
        if reply.first_delay and stopping.wait(reply.first_delay):
            self.close_connection = True
            return
        pieces = len(_chunks(text))  # events 1..pieces carry the text
        written: list[float] = []
        for position, event in enumerate(events):
            if position - 1 == reply.stall_after:
                stopping.wait(reply.stall)
                self.close_connection = True  # a stopped server, killed in the end
                return
            self._write_chunk(f"data: {json.dumps(event)}\n\n")
            if 1 <= position <= pieces:
                written.append(time.monotonic())
            if reply.chunk_delay and stopping.wait(reply.chunk_delay):
                self.close_connection = True  # cut the stream: the client must not hang
                return
        self._write_chunk("data: [DONE]\n\n")
        self._end_stream()
        # When the first and the last piece of text left: the fake's own emission time.
        self.server.fake.emitted.append((written[0], written[-1]))

    # -- Anthropic -------------------------------------------------------------------------

    def _anthropic(self, request: RecordedRequest, reply: Reply) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        choice = body.get("tool_choice") or {}
        tool = choice.get("name") if choice.get("type") == "tool" else None
        model = body.get("model", "fake")
        use_tool = reply.text is None and (reply.data is not None or tool is not None)
        text = "" if use_tool else (reply.text or self.server.fake.default_text)
        if use_tool:
            data = reply.data if reply.data is not None else {}
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": "toolu_fake",
                "name": tool or "respond",
                "input": data,
            }
            prompt, completion = _usage_numbers(request, json.dumps(data))
        else:
            block = {"type": "text", "text": text}
            prompt, completion = _usage_numbers(request, text)
        message: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": "tool_use" if use_tool else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt if reply.usage else 0,
                "output_tokens": completion if reply.usage else 0,
            },
        }
        if not body.get("stream"):
            self._send(200, message, reply.headers)
            return
        start = {**message, "content": [], "stop_reason": None}
        start["usage"] = {"input_tokens": message["usage"]["input_tokens"], "output_tokens": 1}
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            ("ping", {"type": "ping"}),
        ]
        for piece in _chunks(text):
            delta = {"type": "text_delta", "text": piece}
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                )
            )
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._start_stream(reply.headers)
        for name, event in events:
            self._write_chunk(f"event: {name}\ndata: {json.dumps(event)}\n\n")
            if reply.chunk_delay and self.server.fake._stopping.wait(reply.chunk_delay):
                self.close_connection = True  # cut the stream: the client must not hang
                return
        self._end_stream()


def _format(request: RecordedRequest) -> str:
    """The response format an OpenAI request asks for, as `refused_formats` names it."""
    body = request.body if isinstance(request.body, dict) else {}
    wanted = body.get("response_format")
    if not isinstance(wanted, dict):
        return "text"
    kind = str(wanted.get("type", "text"))
    return f"{kind}+schema" if kind == "json_object" and "schema" in wanted else kind


def _structured(request: RecordedRequest) -> bool:
    """Whether a request asks for a structured answer (a JSON response format or tools)."""
    body = request.body if isinstance(request.body, dict) else {}
    return _format(request) != "text" or bool(body.get("tools"))


def _models_body(models: list[str]) -> dict[str, Any]:
    # One shape both SDKs accept: OpenAI's list plus Anthropic's paging fields.
    data = [
        {
            "id": m,
            "object": "model",
            "created": 0,
            "owned_by": "fake",
            "type": "model",
            "display_name": m,
            "created_at": "2024-01-01T00:00:00Z",
        }
        for m in models
    ]
    return {
        "object": "list",
        "data": data,
        "has_more": False,
        "first_id": models[0] if models else None,
        "last_id": models[-1] if models else None,
    }


def _props_body(context_size: int) -> dict[str, Any]:
    # llama.cpp's server: its slots' settings, the context size among them.
    return {
        "default_generation_settings": {"n_ctx": context_size, "temperature": 0.8},
        "total_slots": 1,
        "chat_template": "",
    }


def _show_body(context_size: int, request: RecordedRequest) -> dict[str, Any]:
    # Ollama's model details: the trained window per architecture, and no num_ctx set.
    body = request.body if isinstance(request.body, dict) else {}
    return {
        "modelfile": f"FROM {body.get('model', 'fake')}",
        "parameters": 'stop "<|im_end|>"',
        "template": "{{ .Prompt }}",
        "details": {"family": "llama", "format": "gguf"},
        "model_info": {"general.architecture": "llama", "llama.context_length": context_size},
    }


def _error_body(status: int, request: RecordedRequest, anthropic: bool) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "api_error")
    message = f"Fake error {status}."
    if status == 401:
        # Real servers echo (part of) the key; echo all of it, so tests prove it never leaks.
        message = f"Incorrect API key provided: {request.api_key}"
    if anthropic:
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default=DEFAULT_TEXT, help="the default completion text")
    parser.add_argument(
        "--chunk-delay", type=float, default=0.0, help="seconds between streamed words"
    )
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds before every answer (a model thinking)"
    )
    parser.add_argument(
        "--structured",
        default=None,
        help="the JSON answer to every structured request (a json response format or tools)",
    )
    args = parser.parse_args(argv)
    server = FakeLLMServer(args.host, args.port, default_text=args.text)
    structured = json.loads(args.structured) if args.structured else None
    if args.chunk_delay or args.delay or structured is not None:

        def respond(request: RecordedRequest) -> Reply:
            if structured is not None and _structured(request):
                return Reply(data=structured, delay=args.delay)
            return Reply(text=args.text, chunk_delay=args.chunk_delay, delay=args.delay)

        server.responder = respond
    print(f"LISTENING {server.base_url}", flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
