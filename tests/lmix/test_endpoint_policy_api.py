"""The models API refuses endpoints outside LMIX_LLM_ALLOWED_NETWORKS with a 400 that says why."""

import httpcore2
import pytest

from lmix.models import LLMCall, LLMModel
from tests.factories import LLMModelFactory
from tests.fakes.llm_server import FakeLLMServer

pytestmark = pytest.mark.django_db
INNER = [
    "http://169.254.169.254/latest/meta-data",
    "http://10.0.0.1/v1",
    "http://[fd00::1]/v1",
    "http://2130706433/v1",
    "http://127.0.0.1:5432",
    "http://0177.0.0.1:11434",
    "http://[::ffff:127.0.0.1]:8000/v1",
    "http://metadata.google.internal/computeMetadata/v1",
]
SECRET = "sk-PLANTED-in-the-url"


@pytest.fixture(autouse=True)
def services_default(settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public"]


@pytest.fixture
def no_connections(monkeypatch) -> list[str]:
    """Fails nothing by itself: records any TCP connection a model call attempts."""
    attempts: list[str] = []

    def connect_tcp(self, host, port, *args, **kwargs):
        attempts.append(f"{host}:{port}")
        raise httpcore2.ConnectError("no network in this test")

    monkeypatch.setattr(httpcore2.SyncBackend, "connect_tcp", connect_tcp)
    return attempts


def _reason(response) -> str:
    body = response.json()
    assert response.status_code == 400, body
    (reason,) = body["errors"]["api_endpoint"]
    assert body["detail"] == reason
    return reason


@pytest.mark.parametrize("url", INNER)
def test_creating_a_model_at_an_inner_address_is_a_400_that_says_why(api, url):
    response = api.post("/api/models", {"api_endpoint": url, "model_id": "m"}, format="json")
    reason = _reason(response)
    assert "address" in reason or "metadata" in reason
    assert not LLMModel.objects.filter(model_id="m").exists()


def test_a_refusal_echoes_no_credentials_from_the_url(api):
    url = f"http://admin:{SECRET}@10.0.0.1:8000/v1?api_key={SECRET}"
    response = api.post("/api/models", {"api_endpoint": url, "model_id": "m"}, format="json")
    assert _reason(response).startswith("10.0.0.1 is a private address;")
    assert SECRET not in response.content.decode() and "admin" not in response.content.decode()


def test_a_bulk_add_names_the_refused_item(api):
    response = api.post(
        "/api/models",
        [
            {"api_endpoint": "https://api.openai.com/v1", "model_id": "gpt-4o"},
            {"api_endpoint": "http://10.0.0.1:11434", "model_id": "llama3"},
        ],
        format="json",
    )
    assert response.status_code == 400
    first, second = response.json()["errors"]
    assert first == {} and "private address" in second["api_endpoint"][0]
    assert not LLMModel.objects.filter(model_id__in=["gpt-4o", "llama3"]).exists()


def test_moving_a_model_to_an_inner_address_is_a_400_and_changes_nothing(api, user):
    model = LLMModelFactory(owner=user, api_endpoint="https://api.openai.com/v1")
    response = api.patch(
        f"/api/models/{model.id}", {"api_endpoint": "http://[::1]:11434"}, format="json"
    )
    assert "loopback address" in _reason(response)
    model.refresh_from_db()
    assert model.api_endpoint == "https://api.openai.com/v1"


def test_renaming_a_model_does_not_judge_its_unchanged_endpoint(api, user):
    model = LLMModelFactory(owner=user, api_endpoint="http://10.0.0.1/v1")  # saved earlier
    response = api.patch(f"/api/models/{model.id}", {"name": "Old box"}, format="json")
    assert response.status_code == 200


@pytest.mark.parametrize("url", INNER)
def test_the_connection_test_refuses_inner_addresses_before_connecting(api, no_connections, url):
    response = api.post("/api/models/test", {"api_endpoint": url}, format="json")
    _reason(response)
    assert no_connections == []


def test_the_connection_test_of_a_saved_model_at_an_inner_address_is_refused(
    api, user, no_connections
):
    model = LLMModelFactory(owner=user, api_endpoint="http://127.0.0.1:5432/v1")
    response = api.post("/api/models/test", {"id": str(model.id)}, format="json")
    assert "loopback address" in _reason(response)
    assert no_connections == []
    assert LLMCall.objects.get().error == _reason(response)  # an attempt is still on record


def test_a_scan_of_inner_ports_learns_nothing_as_every_port_gets_the_same_refusal(api):
    with FakeLLMServer() as open_port:
        answers = {
            _reason(api.post("/api/models/test", {"api_endpoint": url}, format="json"))
            for url in (open_port.base_url, "http://127.0.0.1:1/v1", "http://127.0.0.1:5432")
        }
        assert open_port.requests == []
    assert len({answer.split(" ", 1)[1] for answer in answers}) == 1


def test_a_local_server_is_reachable_once_the_operator_allows_loopback(api, settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public", "loopback"]
    with FakeLLMServer(models=["alpha"]) as server:
        response = api.post("/api/models/test", {"api_endpoint": server.base_url}, format="json")
        assert response.status_code == 200 and response.json()["models"] == ["alpha"]
        created = api.post(
            "/api/models", {"api_endpoint": server.base_url, "model_id": "alpha"}, format="json"
        )
        assert created.status_code == 201


def test_the_offline_narrator_is_no_network_endpoint_and_always_allowed(api, settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = []
    response = api.post(
        "/api/models",
        {"api_endpoint": "offline://narrator", "model_id": "narrator2"},
        format="json",
    )
    assert response.status_code == 201
    tested = api.post("/api/models/test", {"id": response.json()["id"]}, format="json")
    assert tested.status_code == 200 and tested.json()["ok"] is True
