"""Each model server's slots (lmix/llm/slots.py): no more calls at once than it serves,
those waiting in the order people wait for them, a dead holder's slot freed, and a call's
timeout started only once it is sent."""

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

from lmix.llm import slots
from lmix.llm.client import llm_structured
from lmix.models import LLMModel
from tests.fakes.llm_server import FakeLLMServer, Reply


class Answer(BaseModel):
    word: str


@pytest.fixture(params=["memory", "redis"])
def store(request, settings):
    """Both stores: this process's, and Redis's (what every process shares), when the run
    has Redis."""
    if request.param == "memory":
        return slots.MemoryStore()
    if not settings.REDIS_URL:
        pytest.skip("no Redis in this run (the PostgreSQL + Redis stage runs it)")
    import redis

    return slots.RedisStore(redis.Redis.from_url(settings.REDIS_URL))


def ticket(endpoint: str, purpose: str, arrival: float, slots_: int = 1) -> slots.Ticket:
    order = slots.rank(purpose) * 1e14 + arrival
    about = json.dumps({"purpose": purpose, "subject": "", "since": arrival})
    return slots.Ticket(endpoint, slots_, order, f"{purpose}-{arrival}", about)


def test_waiters_go_by_rank_then_arrival_once_the_holder_is_done(store):
    endpoint = f"http://127.0.0.1:1/{time.time_ns()}"
    now = time.time()
    running = ticket(endpoint, "synthesis.state", 1)
    background = ticket(endpoint, "synthesis.scene", 2)
    narrative = ticket(endpoint, "synthesis.flesh", 3)
    outcome = ticket(endpoint, "synthesis.bones", 4)

    assert store.try_take(running, now) == -1  # a free slot: taken at once
    # Everyone else waits: the number is the calls that go before each.
    assert store.try_take(background, now) == 1
    assert store.try_take(narrative, now) == 1  # ahead of the background pass
    assert store.try_take(outcome, now) == 1  # ahead of both
    assert store.try_take(background, now) == 3
    queue = store.queue(endpoint, now)
    assert [c["purpose"] for c in queue["running"]] == ["synthesis.state"]
    assert [c["purpose"] for c in queue["waiting"]] == [
        "synthesis.bones",
        "synthesis.flesh",
        "synthesis.scene",
    ]

    store.release(running)
    assert store.try_take(background, now) >= 0  # not its turn
    assert store.try_take(narrative, now) >= 0
    assert store.try_take(outcome, now) == -1  # the outcome's turn
    store.release(outcome)
    assert store.try_take(background, now) == 1
    assert store.try_take(narrative, now) == -1


def test_a_holder_that_stops_renewing_frees_its_slot_and_a_silent_waiter_leaves(store, settings):
    endpoint = f"http://127.0.0.1:1/{time.time_ns()}"
    now = time.time()
    dead = ticket(endpoint, "synthesis.flesh", 1)
    gone = ticket(endpoint, "synthesis.bones", 2)  # waits, then its process dies
    alive = ticket(endpoint, "synthesis.flesh", 3)
    assert store.try_take(dead, now) == -1
    assert store.try_take(gone, now) == 1
    assert store.try_take(alive, now) == 2

    later = now + settings.LMIX_LEASE_TIMEOUT_SECONDS - 1
    store.renew([dead], now)  # renewed: still held a while later
    assert store.try_take(alive, later) >= 0
    # Nobody renews it: its hold lapses; the waiter that stopped asking is dropped.
    much_later = now + settings.LMIX_LEASE_TIMEOUT_SECONDS + slots.STALE_SECONDS + 1
    assert store.try_take(alive, much_later) == -1


def test_two_slots_take_two_at_once(store):
    endpoint = f"http://127.0.0.1:1/{time.time_ns()}"
    now = time.time()
    first, second, third = (ticket(endpoint, "synthesis.flesh", n, slots_=2) for n in (1, 2, 3))
    assert store.try_take(first, now) == -1
    assert store.try_take(second, now) == -1
    assert store.try_take(third, now) == 2


@pytest.fixture
def one_slot(user, settings):
    """A model on a local fake server its owner says serves one request at a time."""
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["loopback"]
    with FakeLLMServer() as server:
        model = LLMModel.objects.create(
            owner=user,
            name="Local",
            provider="openai_compatible",
            api_endpoint=server.base_url,
            model_id="fake-llama",
            config={"concurrency": 1},
        )
        yield server, model


@pytest.mark.django_db(transaction=True)
def test_calls_to_a_one_slot_server_go_one_at_a_time_and_time_out_only_once_sent(
    one_slot, settings
):
    """Three calls at once, each answered in 1.5 s, with a 2 s limit: sent together, the
    last two would wait 1.5 s and 3 s in the server's own queue; sent in turn, each has its
    whole limit, and the server never holds two."""
    server, model = one_slot
    settings.LLM_TIMEOUT_SECONDS = 2.0
    in_flight, most = 0, 0
    lock = threading.Lock()

    def answer(request):
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        time.sleep(1.5)
        with lock:
            in_flight -= 1
        return Reply(data={"word": "yes"})

    server.responder = answer
    told: dict[int, list[int]] = {0: [], 1: [], 2: []}
    answers: list = [None] * 3

    def call(n: int) -> None:
        answers[n] = llm_structured(
            model=model,
            messages=[],
            schema=Answer,
            purpose="synthesis.flesh",
            waiting=told[n].append,
        ).word

    threads = [threading.Thread(target=call, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
        time.sleep(0.05)  # in this order
    for thread in threads:
        thread.join(30)

    assert answers == ["yes", "yes", "yes"]
    assert most == 1
    assert told[0] == []  # its turn at once: never told to wait
    assert told[1][0] == 1 and told[1][-1] == 0  # one ahead, then sent
    assert told[2][0] == 2 and 1 in told[2] and told[2][-1] == 0


class Props(BaseHTTPRequestHandler):
    """llama.cpp's own route: how many requests it serves at once."""

    def do_GET(self) -> None:  # noqa: N802
        body = json.dumps({"total_slots": 3, "default_generation_settings": {"n_ctx": 4096}})
        self.send_response(200 if self.path == "/props" else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args) -> None:
        pass


def test_a_llama_cpp_server_says_how_many_slots_it_has_and_others_get_the_setting(settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["loopback"]
    settings.LMIX_LOCAL_MODEL_SLOTS = 1
    server = ThreadingHTTPServer(("127.0.0.1", 0), Props)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        llama = f"http://127.0.0.1:{server.server_address[1]}/v1"
        assert slots.slots_for("openai_compatible", llama, {}, lambda: "") == 3
        assert slots.slots_for("openai_compatible", llama, {"concurrency": 8}, lambda: "") == 8
    finally:
        server.shutdown()
    with FakeLLMServer() as other:  # no /props: the setting
        assert slots.slots_for("openai_compatible", other.base_url, {}, lambda: "") == 1
        settings.LMIX_LOCAL_MODEL_SLOTS = 0
        assert slots.slots_for("openai_compatible", other.base_url + "/x", {}, lambda: "") == 0
    # A hosted API is not limited, nor asked.
    assert slots.slots_for("openai", "https://api.openai.com/v1", {}, lambda: "") == 0


@pytest.mark.django_db(transaction=True)
def test_the_table_hears_how_many_calls_go_before_a_characters_and_when_it_is_sent(
    one_slot, monkeypatch
):
    """`model.waiting` to the frame's group: what the window's badge shows."""
    from lmix.realtime import publish
    from synthesis.frame_events import frame_group, model_waiting

    server, model = one_slot
    server.responder = lambda request: time.sleep(1.0) or Reply(data={"word": "yes"})
    published: list = []
    monkeypatch.setattr(publish, "_put", lambda group, message: published.append((group, message)))

    def call(seat: str) -> None:
        llm_structured(
            model=model,
            messages=[],
            schema=Answer,
            purpose="synthesis.bones",
            waiting=model_waiting("frame-1", seat, "outcome"),
        )

    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    first = threading.Thread(target=call, args=(a,))
    first.start()
    time.sleep(0.3)
    call(b)  # waits for the first, then is sent
    first.join(10)

    heard = [(g, m["payload"]) for g, m in published]
    assert {g for g, _ in heard} == {frame_group("frame-1")}
    assert [(p["seat"], p["step"], p["ahead"]) for _, p in heard] == [
        (b, "outcome", 1),
        (b, "outcome", 0),
    ]


def test_a_waiting_call_whose_work_is_gone_leaves_the_queue_unsent():
    """Asked every second while it waits: once its work no longer wants it (a rewind, a
    restart elsewhere), it raises LLMCancelled and nobody waits behind it."""
    from lmix.llm.base import LLMCancelled

    endpoint = f"http://127.0.0.1:1/{time.time_ns()}"
    busy = ticket(endpoint, "synthesis.flesh", 1)
    slots.store().try_take(busy, time.time())  # the one slot, taken
    still = threading.Event()
    still.set()
    outcome: list = []

    def wait() -> None:
        try:
            with slots.slot_held(
                endpoint=endpoint, slots=1, purpose="synthesis.bones", wanted=still.is_set
            ):
                outcome.append("sent")
        except LLMCancelled:
            outcome.append("cancelled")

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(1.5)  # asked once: still wanted
    assert [c["purpose"] for c in slots.endpoint_queue(endpoint)["waiting"]] == ["synthesis.bones"]
    still.clear()
    waiter.join(5)
    assert outcome == ["cancelled"]
    assert slots.endpoint_queue(endpoint)["waiting"] == []
    slots.store().release(busy)
