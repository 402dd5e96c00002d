"""Endpoint URLs: normalise what users paste, infer the provider, name a model for humans."""

import ipaddress
import re
from urllib.parse import urlsplit

OFFLINE_SCHEME = "offline://"

# What people paste after the base URL; the SDKs add these paths themselves.
_CALL_SUFFIXES = ("/chat/completions", "/completions", "/messages", "/models")


def _looks_local(host: str) -> bool:
    if host in ("localhost", "host.docker.internal") or "." not in host:
        return True
    if host.endswith((".local", ".lan", ".internal")):
        return True
    try:
        return ipaddress.ip_address(host).is_private
    except ValueError:
        return False


def looks_local(url: str) -> bool:
    """Whether the endpoint is a server of one's own: localhost, a private address, a name
    of the local network."""
    return _looks_local(urlsplit(url).hostname or "")


def normalize_endpoint(url: str) -> str:
    """Strip whitespace, trailing slashes and a pasted call path; add a scheme if missing."""
    url = url.strip()
    if not url or url.startswith(OFFLINE_SCHEME):
        return url
    if "://" not in url:
        # Local servers rarely have TLS; anything else on the internet should.
        host = urlsplit(f"//{url}").hostname or ""
        url = f"{'http' if _looks_local(host) else 'https'}://{url}"
    url = url.rstrip("/")
    for suffix in _CALL_SUFFIXES:
        if url.lower().endswith(suffix):
            url = url[: -len(suffix)].rstrip("/")
            break
    return url


def infer_provider(endpoint: str) -> str:
    """Guess the provider kind from an endpoint URL; unknown servers speak OpenAI's API."""
    if endpoint.strip().startswith(OFFLINE_SCHEME):
        return "offline"
    try:
        parts = urlsplit(endpoint.strip() if "://" in endpoint else f"//{endpoint.strip()}")
        host, port = (parts.hostname or "").lower(), parts.port
    except ValueError:
        return "openai_compatible"
    if host == "api.openai.com":
        return "openai"
    if host == "api.anthropic.com":
        return "anthropic"
    if port == 11434 or "ollama" in host:
        return "ollama"
    return "openai_compatible"


def api_base(provider: str, endpoint: str) -> str:
    """The base URL an SDK wants: Ollama's OpenAI API lives under /v1; Anthropic's SDK adds /v1."""
    endpoint = normalize_endpoint(endpoint)
    if provider == "ollama" and not endpoint.endswith("/v1"):
        return f"{endpoint}/v1"
    if provider == "anthropic" and endpoint.endswith("/v1"):
        return endpoint[: -len("/v1")]
    return endpoint


_WORDS = {
    "gpt": "GPT",
    "llm": "LLM",
    "it": "IT",
    "hf": "HF",
    "gguf": "GGUF",
    "awq": "AWQ",
    "gptq": "GPTQ",
    "fp16": "FP16",
    "bf16": "BF16",
    "moe": "MoE",
    "chatgpt": "ChatGPT",
    "deepseek": "DeepSeek",
    "openai": "OpenAI",
    "qwq": "QwQ",
}


def _word(token: str) -> str:
    low = token.lower()
    if low in _WORDS:
        return _WORDS[low]
    if re.fullmatch(r"\d+(\.\d+)?(x\d+)?[bmk]", low):
        return token[:-1] + token[-1].upper()  # sizes: 8B, 8x7B
    if re.fullmatch(r"q\d\w*", low):
        return token.upper()  # quantisations: Q4_K_M
    if re.fullmatch(r"[ov]\d+(\.\d+)*", low):
        return low  # OpenAI's o1/o3 and version tags like v0.2 are written lower case
    if re.fullmatch(r"\d{8}", token):
        return f"({token[:4]}-{token[4:6]}-{token[6:]})"  # a dated snapshot
    if low == "latest":
        return "(latest)"
    return token[:1].upper() + token[1:]


def _tokens(model_id: str) -> list[str]:
    tokens: list[str] = []
    for raw in re.split(r"[-:\s/]+", model_id):
        if not raw:
            continue
        # "llama3.1" -> "llama", "3.1"; keep "4o", "8b" and "o1" whole.
        glued = re.fullmatch(r"([a-zA-Z]{2,})(\d+(?:\.\d+)*)", raw)
        tokens.extend(glued.groups() if glued else [raw])
    # "claude-3-5-sonnet" -> "3.5": single digits in a row form one version.
    merged: list[str] = []
    for token in tokens:
        after_version = len(merged) >= 2 and merged[-2].isalpha()
        if after_version and re.fullmatch(r"\d", token) and re.fullmatch(r"\d+", merged[-1]):
            merged[-1] = f"{merged[-1]}.{token}"
            continue
        merged.append(token)
    return merged


def model_display_name(model_id: str) -> str:
    """A readable name: 'gpt-4-turbo-preview' -> 'GPT-4 Turbo Preview'."""
    model_id = model_id.strip()
    if model_id in ("", "narrator"):
        return "Offline Narrator" if model_id else ""
    base = model_id.rsplit("/", 1)[-1]  # "meta-llama/Llama-3.1-8B" -> the model, not the org
    words: list[str] = []
    for token in _tokens(base):
        if words == ["GPT"] and re.match(r"\d", token):
            words[-1] = f"GPT-{token}"  # OpenAI writes "GPT-4", never "GPT 4"
            continue
        words.append(_word(token))
    return " ".join(words)
