"""Real LMiX processes for tests and benchmarks: a Celery worker sharing the test database,
started and killed like an operator would."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.db import connection
from websockets.sync.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent


def database_url() -> str:
    """The URL of the database this process is using now (the test database in tests)."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


def child_env(**overrides: str) -> dict[str, str]:
    """Environment for a child process on this process's database and channel layer, with
    a broker of its own: memory:// on SQLite (the worker's sweeper feeds it), otherwise a
    Redis database no in-process test worker listens to."""
    env = {
        k: v for k, v in os.environ.items() if k not in {"CELERY_BROKER_URL", "PYTEST_XDIST_WORKER"}
    }
    env["DATABASE_URL"] = database_url()
    env["LMIX_DATA_DIR"] = str(settings.DATA_DIR)
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    # As in this process (tests/conftest.py): a test that wants state passes says so.
    env["LMIX_STATE_PASSES"] = "1" if settings.LMIX_STATE_PASSES else "0"
    env["LMIX_LOCAL_MODEL_SLOTS"] = str(settings.LMIX_LOCAL_MODEL_SLOTS)
    if settings.REDIS_URL:
        url = urlsplit(settings.REDIS_URL)
        database = (int(url.path.strip("/") or 0) + 1) % 16  # the next Redis database
        env["CELERY_BROKER_URL"] = urlunsplit(url._replace(path=f"/{database}"))
    else:
        env.pop("REDIS_URL", None)
        env["CELERY_BROKER_URL"] = "memory://localhost/"
    env.update(overrides)
    return env


@contextmanager
def worker_process(
    env: dict[str, str],
    *,
    concurrency: int = 2,
    queues: str = "short,streams",
    log: Path | None = None,
) -> Iterator[subprocess.Popen]:
    """`celery worker` as its own process (threads pool, no beat) on `queues`; killed on
    exit. With `log`, it logs at INFO into that file."""
    sink = subprocess.PIPE if log is None else log.open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool",
            "threads",
            "--concurrency",
            str(concurrency),
            "--queues",
            queues,
            "--loglevel",
            "WARNING" if log is None else "INFO",
            "--without-mingle",
            "--without-gossip",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=sink,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(10)
        if process.stderr is not None:
            process.stderr.close()
        if log is not None:
            sink.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def web_process(env: dict[str, str], *, port: int, worker: bool) -> Iterator[subprocess.Popen]:
    """`manage.py serve` (daphne) on 127.0.0.1:`port`, with or without an in-process
    worker; returns once it accepts connections."""
    command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--quiet", "--worker", "yes" if worker else "no"]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the web process did not start") from None
                time.sleep(0.1)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def kill_9(process: subprocess.Popen) -> None:
    """What a crash, an OOM kill or a pulled plug does: no cleanup at all."""
    process.send_signal(signal.SIGKILL)
    process.wait(10)


def ready_socket(port: int, path: str, cookie: str) -> ClientConnection:
    """A websocket on a live web process, as a browser of the session `cookie` opens it,
    once the server said `ready`."""
    ws = connect(
        f"ws://127.0.0.1:{port}{path}",
        additional_headers={"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"},
        open_timeout=30,
    )
    assert json.loads(ws.recv(timeout=30))["type"] == "ready"
    return ws
