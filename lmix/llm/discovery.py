"""Context size discovery: ask a model's server how many tokens its model takes, where it says.

llama.cpp's server reports its window at `GET /props` (`default_generation_settings.n_ctx`)
and may describe each model in `GET /v1/models` (`meta.n_ctx`, `meta.n_ctx_train`);
llama-cpp-python's server only in its refusal of an over-long prompt; Ollama
at `POST /api/show` (`num_ctx` among its parameters, else `model_info["<arch>.context_length"]`).
Hosted OpenAI and Anthropic models come from the table in `tokens.py`. Anything else is
unknown (None): the model form then asks for it. Discovery never raises and never logs a key;
every request goes through `pinned_http_client`, so the endpoint policy applies to it too.
"""

import json
import logging
import re
from collections.abc import Iterable, Iterator
from contextlib import suppress
from typing import Any

import httpx2

from .base import LLMEndpointRefused
from .endpoints import api_base, normalize_endpoint
from .params import MAX_CONTEXT_SIZE, MIN_CONTEXT_SIZE
from .pinning import pinned_http_client
from .tokens import known_context_window

log = logging.getLogger("lmix.llm")
# A probe is a convenience, answered at once by a working server: a silent one is not worth
# holding up an add or a test for.
TIMEOUT_SECONDS = 3.0
# /api/show carries a model's template and license; nothing we read is anywhere near this.
MAX_BODY_BYTES = 2 * 1024 * 1024
# Longer than any window llama-cpp-python is run with on a self-hosted machine; it is only
# tokenized (about a second), never evaluated.
OVERFLOW_TOKENS = 300_000
OVERFLOW_TIMEOUT_SECONDS = 15.0
HOSTED = frozenset({"openai", "anthropic"})
LOCAL = frozenset({"openai_compatible", "ollama"})

Probe = tuple[str, str, str, str]  # provider, endpoint, api_key, model_id


class _Unreachable(Exception):
    """The server did not answer at all: asking it anything else is pointless."""


def _size(value: Any) -> int | None:
    """A context size we can store (params.py's bounds), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = int(value)
    except ValueError:
        return None
    return number if MIN_CONTEXT_SIZE <= number <= MAX_CONTEXT_SIZE else None


class _Server:
    """One server's probes, over one pinned client."""

    def __init__(self, endpoint: str, api_key: str) -> None:
        self.client = pinned_http_client(endpoint, httpx2.Client)
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def ask(self, method: str, url: str, body: Any = None) -> Any:
        """The JSON answer, or None for any answer that is not a 200 with JSON.

        Raises:
            _Unreachable: no answer (refused, timed out, a name that does not resolve).
        """
        try:
            with self.client.stream(
                method, url, json=body, headers=self.headers, timeout=TIMEOUT_SECONDS
            ) as response:
                if response.status_code != 200:
                    return None
                data = bytearray()
                for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) > MAX_BODY_BYTES:
                        return None
            return json.loads(data)
        except (httpx2.TransportError, LLMEndpointRefused):
            # A redirect to a refused address is refused like the endpoint itself would be.
            raise _Unreachable from None
        except (httpx2.HTTPError, ValueError):
            return None

    def refusal(self, method: str, url: str, body: Any) -> str | None:
        """The error message of a 4xx answer (the body's `error.message`), else None."""
        try:
            response = self.client.request(
                method, url, json=body, headers=self.headers, timeout=OVERFLOW_TIMEOUT_SECONDS
            )
            if not 400 <= response.status_code < 500 or len(response.content) > MAX_BODY_BYTES:
                return None
            error = response.json().get("error")
            message = error.get("message") if isinstance(error, dict) else None
            return message if isinstance(message, str) else None
        except (httpx2.TransportError, LLMEndpointRefused):
            raise _Unreachable from None
        except (httpx2.HTTPError, ValueError, AttributeError):
            return None

    def close(self) -> None:
        self.client.close()


def _root(provider: str, endpoint: str) -> str:
    """Where a server's own (non-OpenAI) routes live: its URL without the /v1 API path."""
    return re.sub(r"/v1$", "", api_base(provider, endpoint))


def _from_props(server: _Server, root: str) -> int | None:
    props = server.ask("GET", f"{root}/props")
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    found = _size(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return found or _size(props.get("n_ctx"))


def _from_models(server: _Server, base: str, model_id: str) -> int | None:
    listing = server.ask("GET", f"{base}/models")
    entries = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    # The model asked about, or the only one a single-model server (llama.cpp) serves.
    chosen = [e for e in entries if e.get("id") == model_id] or (
        entries if len(entries) == 1 else []
    )
    meta = chosen[0].get("meta") if chosen else None
    if not isinstance(meta, dict):
        return None
    return _size(meta.get("n_ctx")) or _size(meta.get("n_ctx_train"))


def _from_show(server: _Server, root: str, model_id: str) -> int | None:
    if not model_id:
        return None
    shown = server.ask("POST", f"{root}/api/show", {"model": model_id})
    if not isinstance(shown, dict):
        return None
    # The window the server runs the model with, when its Modelfile sets one.
    parameters = shown.get("parameters")
    if isinstance(parameters, str):
        match = re.search(r"^\s*num_ctx\s+(\d+)\s*$", parameters, re.MULTILINE)
        if match and _size(match.group(1)):
            return _size(match.group(1))
    elif isinstance(parameters, dict) and _size(parameters.get("num_ctx")):
        return _size(parameters.get("num_ctx"))
    info = shown.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if str(key).endswith(".context_length") and _size(value):
                return _size(value)
    return None


def _from_overflow(server: _Server, root: str, base: str, model_id: str) -> int | None:
    """llama-cpp-python's server reports its window nowhere, but refuses a prompt longer
    than it before evaluating anything: "maximum context length is N tokens". Asked only of
    a server that has its tokenizer route, so no other server is sent the long prompt."""
    if server.ask("POST", f"{root}/extras/tokenize/count", {"input": "probe"}) is None:
        return None
    body = {
        "model": model_id or "probe",
        "messages": [{"role": "user", "content": "a " * OVERFLOW_TOKENS}],
        "max_tokens": 1,
    }
    refusal = server.refusal("POST", f"{base}/chat/completions", body)
    match = re.search(r"maximum context length is (\d+) tokens", refusal or "")
    return _size(match.group(1)) if match else None


def _local(server: _Server, provider: str, endpoint: str, model_id: str) -> int | None:
    root = _root(provider, endpoint)
    if provider == "ollama":
        return _from_show(server, root, model_id)
    # An OpenAI-compatible server of unknown make: llama.cpp's routes, then Ollama's (its
    # /v1 is OpenAI-compatible too).
    return (
        _from_props(server, root)
        or _from_models(server, api_base(provider, endpoint), model_id)
        or _from_show(server, root, model_id)
        or _from_overflow(server, root, api_base(provider, endpoint), model_id)
    )


def _discover_group(probes: list[Probe]) -> Iterator[int | None]:
    """Sizes for probes of one server (provider, endpoint and key), over one client."""
    provider, endpoint, api_key, _ = probes[0]
    try:
        server = _Server(api_base(provider, endpoint), api_key)
    except LLMEndpointRefused:
        yield from (None for _ in probes)
        return
    reachable = True
    try:
        for _, _, _, model_id in probes:
            found = None
            if reachable:
                try:
                    found = _local(server, provider, endpoint, model_id)
                except _Unreachable:
                    reachable = False
                except Exception:  # a probe is a convenience: a bug here must not fail an add
                    log.exception("Context size discovery failed (%s)", provider)
            yield found
    finally:
        with suppress(Exception):
            server.close()


def context_sizes_discover(probes: Iterable[Probe]) -> list[int | None]:
    """The context size of each (provider, endpoint, api_key, model_id), None where unknown.

    Probes of one server share a client, and once it does not answer it is not asked again
    (a bulk add of twenty models from a server that is down waits once, not twenty times).
    """
    probes = [(p, normalize_endpoint(e), k or "", m.strip()) for p, e, k, m in probes]
    sizes: list[int | None] = [None] * len(probes)
    groups: dict[tuple[str, str, str], list[int]] = {}
    for index, (provider, endpoint, api_key, model_id) in enumerate(probes):
        if provider in HOSTED:
            sizes[index] = known_context_window(model_id)
        elif provider in LOCAL:
            groups.setdefault((provider, endpoint, api_key), []).append(index)
    for indexes in groups.values():
        for index, size in zip(indexes, _discover_group([probes[i] for i in indexes]), strict=True):
            sizes[index] = size
    return sizes


def context_size_discover(provider: str, endpoint: str, api_key: str, model_id: str) -> int | None:
    """The context size the model's server reports (or the table holds for a hosted model);
    None when nobody says (the offline narrator, an unknown hosted model, a server without
    such a route, one that does not answer)."""
    return context_sizes_discover([(provider, endpoint, api_key, model_id)])[0]


def context_size_unknown(provider: str) -> bool:
    """Whether a model of this provider with no context size should ask its owner for one:
    a local server that did not report it (a hosted model's table default is fine)."""
    return provider in LOCAL


def server_slots(provider: str, endpoint: str, api_key: str = "") -> int | None:
    """How many requests a llama.cpp server serves at once (`GET /props`: `total_slots`);
    None when it does not say (another server, or none answering)."""
    try:
        server = _Server(api_base(provider, endpoint), api_key)
    except LLMEndpointRefused:
        return None
    try:
        props = server.ask("GET", f"{_root(provider, endpoint)}/props")
    except _Unreachable:
        return None
    finally:
        with suppress(Exception):
            server.close()
    slots = props.get("total_slots") if isinstance(props, dict) else None
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None
