"""`python -m tests.bench.slots`: calls to a one-slot local model server (lmix/llm/slots.py,
issue 38 part 6), sent all at once as before, and in turn as now.

A fake llama.cpp server (tests/fakes/llm_server.py with `total_slots` 1: it answers one
request at a time, the rest wait in its own queue, and GET /props says so) answers every
structured call in BENCH_CALL_S (default 1.0) seconds. BENCH_CALLS calls (default 8) start
together, background passes first and outcomes' bones last, with LLM_TIMEOUT_SECONDS at
BENCH_TIMEOUT_S (default 3.5): four calls' worth of queue. Prints, for each way, how many
calls were answered and how many failed "did not answer in time", how long the bones and
the background calls took, and the most requests the server held at once. Prints, never
asserts. Goal: sent in turn, none fails for time spent queued and bones go first.
"""

import os
import threading
import time

from tests.bench.scratch import scratch_database

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
scratch_database()

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from lmix.llm.base import LLMError  # noqa: E402
from lmix.llm.client import llm_structured  # noqa: E402
from lmix.models import LLMModel  # noqa: E402
from tests.factories import UserFactory  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer, Reply  # noqa: E402

CALLS = int(os.environ.get("BENCH_CALLS", "8"))
CALL_S = float(os.environ.get("BENCH_CALL_S", "1.0"))
TIMEOUT_S = float(os.environ.get("BENCH_TIMEOUT_S", "3.5"))


class Answer(BaseModel):
    word: str


def run(scheduled: bool) -> None:
    settings.LMIX_LOCAL_MODEL_SLOTS = 1 if scheduled else 0  # 0: sent at once, as before
    settings.LLM_TIMEOUT_SECONDS = TIMEOUT_S
    with FakeLLMServer() as server:
        server.total_slots = 1
        held, most = 0, 0
        lock = threading.Lock()

        def answer(request) -> Reply | None:
            nonlocal held, most
            if not request.path.startswith("/v1/"):
                return None  # GET /props: its slots, at once
            with lock:
                held += 1
                most = max(most, held)
            time.sleep(CALL_S)
            with lock:
                held -= 1
            return Reply(data={"word": "yes"})

        server.responder = answer
        model = LLMModel.objects.create(
            owner=UserFactory(),
            name=f"Local {scheduled}",
            provider="openai_compatible",
            api_endpoint=server.base_url,
            model_id="llama",
        )
        took: dict[str, list[float]] = {"synthesis.bones": [], "synthesis.state": []}
        failed: list[str] = []

        def call(purpose: str) -> None:
            started = time.monotonic()
            try:
                llm_structured(model=model, messages=[], schema=Answer, purpose=purpose)
                took[purpose].append(time.monotonic() - started)
            except LLMError as error:
                failed.append(f"{purpose}: {error}")

        purposes = ["synthesis.state"] * (CALLS // 2) + ["synthesis.bones"] * (CALLS - CALLS // 2)
        threads = [threading.Thread(target=call, args=(p,)) for p in purposes]
        for thread in threads:
            thread.start()
            time.sleep(0.02)  # in this order: the background passes asked first
        for thread in threads:
            thread.join()
    way = "in turn (LMiX schedules the slot)" if scheduled else "all at once (as before)"
    print(f"-- {CALLS} calls sent {way}")
    timed_out = sum("in time" in f for f in failed)
    print(f"   answered {CALLS - len(failed)}, failed {len(failed)} ({timed_out} on a timeout)")
    for label, purpose in (("bones", "synthesis.bones"), ("background", "synthesis.state")):
        times = sorted(took[purpose])
        shown = f"{times[0]:.1f} to {times[-1]:.1f} s" if times else "none answered"
        print(f"   {label}: {len(times)} answered, {shown} after they were asked")
    print(f"   requests the server held at once, at most: {most}")


def main() -> None:
    call_command("migrate", verbosity=0)
    print(f"== a one-slot local server, {CALL_S:.1f} s a call, timeout {TIMEOUT_S:.1f} s")
    run(scheduled=False)
    run(scheduled=True)


if __name__ == "__main__":
    main()
