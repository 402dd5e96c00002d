"""A real OpenAI-compatible model server for tests: llama.cpp's Python server serving the
SmolLM2-135M GGUF, built by `make model-deps` into `.models/` (docs/providers.md)."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".models" / "venv" / "bin" / "python"
GGUF = ROOT / ".models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
CONTEXT = 4096
START_TIMEOUT = 120


@dataclass
class ModelServer:
    process: subprocess.Popen
    port: int

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def model_id(self) -> str:
        """The id the server lists its model under (its file path)."""
        with urllib.request.urlopen(f"{self.base_url}/models", timeout=10) as answer:
            return json.load(answer)["data"][0]["id"]

    def stop(self) -> None:
        """SIGSTOP: the process hangs with its sockets open, as a stuck server does."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _up(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
            return True
    except OSError:
        return False


@contextmanager
def model_server(*, context: int = CONTEXT, interrupt: bool = False) -> Iterator[ModelServer]:
    """Start a llama.cpp server on a free port; killed on exit (resumed first if stopped).
    `interrupt`: its default, which cuts a running stream when another request arrives
    (LMiX runs passes side by side: docs/providers.md says to turn it off).

    Raises:
        RuntimeError: `.models/` is not built (run `make model-deps`), or it did not start.
    """
    if not (PYTHON.exists() and GGUF.exists()):
        raise RuntimeError("The real model server is not built: run `make model-deps`.")
    port = _free_port()
    log = open(ROOT / ".models" / f"server-{port}.log", "wb")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        [
            str(PYTHON),
            "-m",
            "llama_cpp.server",
            "--model",
            str(GGUF),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(context),
            "--n_threads",
            "2",
            "--interrupt_requests",
            str(interrupt),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    server = ModelServer(process, port)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _up(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"The model server did not start (see {log.name}).")
            time.sleep(0.2)
        yield server
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)
            process.kill()
            process.wait(10)
        log.close()
