"""schemathesis against /api/schema, and malformed input sent to every operation in it:
whatever a client sends, the API never answers 5xx."""

import copy
import json
import re
import uuid
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.config import SchemathesisConfig
from schemathesis.core import NotSet

from productions.models import SpeakerKind, Turn, TurnStatus
from productions.services import production_create
from tests.factories import (
    AffiliationFactory,
    AssistantFactory,
    LLMModelFactory,
    PersonaFactory,
    ScenarioFactory,
    UserFactory,
    WorldFactory,
)

api_schema = schemathesis.openapi.from_wsgi("/api/schema?format=json", get_wsgi_application())
# Excluded: calls that change the fuzzing session itself, and the connection test, which
# would send requests to whatever hosts the fuzzer invents.
schema = api_schema.exclude(path_regex=r"^/api/(auth/(login|logout|signup)|models/test)")
# Malformed requests are refused before anyone logs in or signs up, so those are fuzzed too.
malformed_schema = api_schema.exclude(path_regex=r"^/api/(auth/logout|models/test)")

FUZZ_SETTINGS = {
    "deadline": None,
    "suppress_health_check": [
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
}


@pytest.fixture
def session_auth(db) -> dict[str, dict[str, str]]:
    """`case.call` arguments for a logged-in session: its cookies and the CSRF header.
    Cookies go in `cookies`: the WSGI client replaces a `Cookie` header with its own jar's.
    While the test runs, requests must not close the test's transaction (Django's test
    client arranges the same for itself)."""
    client = Client()
    client.force_login(UserFactory())
    client.get("/api/auth/csrf")
    session, csrf = client.cookies["sessionid"].value, client.cookies["csrftoken"].value
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield {
        "cookies": {"sessionid": session, "csrftoken": csrf},
        "headers": {"X-CSRFToken": csrf},
    }
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=15, **FUZZ_SETTINGS)
def test_no_request_gets_a_server_error(case, session_auth):
    response = case.call(**session_auth)
    case.validate_response(response, checks=[schemathesis.checks.not_a_server_error])


# The generated request, spoiled in one drawn place


def spoiled(body: Any, index: int, how: str) -> Any:
    """A copy of `body` with one place (the `index`-th, modulo their count; dict keys count
    as places) given a lone surrogate or a NUL, or buried in 200 levels of arrays."""
    body = copy.deepcopy(body)
    root = [body]
    places: list[tuple[Any, Any, bool]] = [(root, 0, False)]  # (container, key, is_a_key)
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            places += [(node, key, is_a_key) for key in node for is_a_key in (True, False)]
            stack += node.values()
        elif isinstance(node, list):
            places += [(node, position, False) for position in range(len(node))]
            stack += node
    container, key, is_a_key = places[index % len(places)]
    poison = {"surrogate": "\ud800", "nul": "\x00"}.get(how)
    if is_a_key and poison:
        container[f"{key}{poison}"] = container.pop(key)
    elif poison:
        value = container[key]
        container[key] = f"{value}{poison}" if isinstance(value, str) else poison
    else:
        for _ in range(200):
            container[key] = [container[key]]
    return root[0]


@pytest.mark.django_db
@malformed_schema.parametrize()
@malformed_schema.given(data=st.data())
@settings(max_examples=4, **FUZZ_SETTINGS)
def test_no_spoiled_request_gets_a_server_error(case, data, session_auth):
    """Each generated request is sent again with a lone surrogate, a NUL, or deep nesting in
    one drawn place of its body, and with a NUL in one of its path parameters."""
    sent = []
    if not isinstance(case.body, NotSet):
        headers = {**session_auth["headers"], "Content-Type": "application/json"}
        for how in ("surrogate", "nul", "deep"):
            index = data.draw(st.integers(0, 10_000), label=f"{how} place")
            # ensure_ascii: a lone surrogate is sent as the escape \ud800, as clients do.
            raw = json.dumps(spoiled(case.body, index, how), default=str).encode()
            response = case.call(cookies=session_auth["cookies"], headers=headers, data=raw)
            sent.append((how, raw[:300], response))
    if case.path_parameters:
        name = data.draw(st.sampled_from(sorted(case.path_parameters)), label="path parameter")
        case.path_parameters[name] = f"{case.path_parameters[name]}\x00"
        sent.append((f"NUL in {name}", case.formatted_path, case.call(**session_auth)))
    failures = [(how, what, r.status_code) for how, what, r in sent if r.status_code >= 500]
    assert not failures


# Every operation, fixed malformed input, anonymous and logged in

OPERATIONS = sorted(
    (method.upper(), path)
    for path, operations in api_schema.raw_schema["paths"].items()
    for method in operations
    if method in {"get", "put", "post", "patch", "delete"}
)
# Percent-encoded, as they arrive: a lone surrogate (\ud800 as UTF-8 bytes, which is not
# valid UTF-8), a NUL, a text that fits the id pattern but is no UUID, an unknown id.
BAD_PATH_VALUES = ["%ED%A0%80", "%00", "-" * 36, "0" * 32]
BAD_QUERIES = [
    "format=%00",
    "id=%ED%A0%80&provider=%00&status=%ED%A0%80&name=%00&owner=-1&%ED%A0%80=%00",
]
DEEP = "[" * 10_000 + "]" * 10_000
WHOLE_BODIES = [
    DEEP,
    '{"a": ' * 10_000 + "1" + "}" * 10_000,
    '"\\ud800"',
    '{"\\udfff": 1}',
    "[]",
    "[{}]",
    '"x"',
    "null",
    "{}",
    "{",
    "NaN",
]
# What an anonymous client sends where it is refused before its body is read.
ANONYMOUS_BODIES = WHOLE_BODIES[:4]
# Given to every property of an operation's body at once, as JSON text.
FIELD_VALUES = [
    "null",
    "[]",
    "{}",
    "-1",
    "1e999",
    "1" * 30,
    "true",
    '""',
    '"\\u0000"',
    '"x\\udc00y"',
    '{"\\ud800": 1}',
    f'"{"-" * 36}"',
    '["\\u0000"]',
    '{"\\u0000": "\\u0000"}',
    '{"temperature": 1e999, "max_tokens": 1e30, "stop": ["\\u0000"]}',
    f'"{"x" * 30_000}"',
    DEEP,
]


def body_properties(method: str, path: str) -> list[str] | None:
    """The property names of an operation's JSON body, or None if it takes no body."""
    operation = api_schema.raw_schema["paths"][path][method.lower()]
    content = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if content is None:
        return None
    body = content["schema"]
    if "$ref" in body:
        body = api_schema.raw_schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]
    return sorted(body.get("properties", {}))


def malformed_requests(
    method: str, path: str, ids: dict[str, str], *, each_field: bool = True
) -> list[tuple[str, str]]:
    """(url, body) pairs: bad path parameters (the others real), bad queries, bad bodies,
    and (with `each_field`) bodies giving every property the same bad value."""
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    # A parameter without an object of the user's is given an unknown id.
    real = {name: ids.get(name) or str(uuid.uuid4()) for name in names}
    requests = []
    for name in names:
        for bad in BAD_PATH_VALUES:
            url = path
            for other in names:
                url = url.replace(f"{{{other}}}", bad if other == name else real[other])
            requests.append((url, ""))
    unknown = path
    for name in names:
        unknown = unknown.replace(f"{{{name}}}", str(uuid.uuid4()))
    requests += [(f"{unknown}?{query}", "") for query in BAD_QUERIES]
    properties = body_properties(method, path)
    if properties is not None:
        url = path
        for name in names:
            url = url.replace(f"{{{name}}}", real[name])
        requests += [(url, body) for body in WHOLE_BODIES if each_field or body in ANONYMOUS_BODIES]
        for value in FIELD_VALUES if each_field else ():
            fields = ", ".join(f'"{name}": {value}' for name in properties or ["name"])
            requests.append((url, f"{{{fields}}}"))
    return requests


def owned_ids(collection: str, user) -> dict[str, str]:
    """Ids of one of the user's own objects of `collection` (a production: and of its turn),
    so that a bad path parameter is looked up next to a good one, and bodies reach the view."""
    factories = {
        "models": LLMModelFactory,
        "worlds": WorldFactory,
        "scenarios": ScenarioFactory,
        "affiliations": AffiliationFactory,
        "personas": PersonaFactory,
        "assistants": AssistantFactory,
    }
    if collection in factories:
        return {"id": str(factories[collection](owner=user).pk)}
    if collection != "productions":
        return {}
    model = LLMModelFactory(owner=user)
    production = production_create(
        owner=user,
        name="Fuzzed",
        world=WorldFactory(owner=user),
        scenario=ScenarioFactory(owner=user),
        assistants=[AssistantFactory(owner=user, model=model) for _ in range(2)],
    )
    turn = Turn.objects.create(
        production=production,
        speaker_kind=SpeakerKind.DIRECTOR,
        speaker_name="Director",
        status=TurnStatus.DONE,
    )
    return {"id": str(production.pk), "production_id": str(production.pk), "turn_id": str(turn.pk)}


def shown(body: str) -> str:
    """A body short enough for a failure message."""
    return body if len(body) <= 100 else f"{body[:60]}... ({len(body)} characters)"


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[" ".join(op) for op in OPERATIONS])
def test_malformed_input_to_any_operation_never_gets_a_server_error(
    method, path, user, client_for, anon_client
):
    ids = owned_ids(path.split("/")[2], user) if "{" in path else {}
    public = path.startswith("/api/auth/")
    failures = []
    for who, client in [("anonymous", anon_client), ("logged in", client_for(user))]:
        client.raise_request_exception = False  # a 500 is counted, and the next one tried
        # Anonymous requests elsewhere are refused before their body is read.
        each_field = public or who == "logged in"
        for url, body in malformed_requests(method, path, ids, each_field=each_field):
            response = client.generic(method, url, body.encode(), content_type="application/json")
            if response.status_code >= 500:
                failures.append((who, url, shown(body), response.status_code))
            if public:  # a log-out (or a sign-up) changed who the client is
                client.logout()  # which also drops the CSRF cookie
                if who == "logged in":
                    client.force_login(user)
                client.csrf()
    assert not failures


def test_the_fuzz_reaches_every_operation_with_each_kind_of_bad_input():
    """Guards the test above against quietly sending less: every operation (at least the 54
    of authoring and productions), bodies to those that take one, bad values to every path
    parameter, and the bad queries."""
    assert len(OPERATIONS) >= 54
    sent = {op: malformed_requests(*op, {"id": "ID", "turn_id": "TURN"}) for op in OPERATIONS}
    stop = sent[("POST", "/api/productions/{id}/turns/{turn_id}/stop/")]
    assert ("/api/productions/ID/turns/%ED%A0%80/stop/", "") in stop
    assert ("/api/productions/%00/turns/TURN/stop/", "") in stop
    login = sent[("POST", "/api/auth/login/")]
    assert ("/api/auth/login/", DEEP) in login
    assert ("/api/auth/login/", '{"password": "x\\udc00y", "username": "x\\udc00y"}') in login
    assert sum(1 for _, body in sent[("GET", "/api/worlds/")] if body) == 0
    assert all(url.count("?") == 1 for url, _ in sent[("GET", "/api/worlds/")])
    with_body = [op for op in OPERATIONS if body_properties(*op) is not None]
    assert len(with_body) >= 20


def test_every_answer_with_a_body_names_its_shape():
    """The generated TypeScript types every REST answer: each success but a 204 names an
    object or an array of its own (a serializer or a pydantic answer), never any JSON."""
    components = api_schema.raw_schema["components"]["schemas"]
    shapeless = []
    for method, path in OPERATIONS:
        responses = api_schema.raw_schema["paths"][path][method.lower()]["responses"]
        for code, response in responses.items():
            if not code.startswith("2") or code == "204":
                continue
            content = response.get("content", {})
            schema = next(iter(content.values()), {}).get("schema", {})
            shape = components.get(schema.get("$ref", "").rsplit("/", 1)[-1], schema)
            if not (shape.get("properties") or shape.get("items")):
                shapeless.append((method, path, code))
    assert not shapeless


def test_the_schema_is_generated_without_a_warning(tmp_path):
    from django.core.management import call_command

    # --fail-on-warn: an authenticator, serializer or view the schema cannot describe fails.
    call_command("spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))
    assert "cookieAuth" in (tmp_path / "schema.yml").read_text()  # our session, described


# Every documented field of a create, sent with references the user owns

# The collections a client creates objects in (POST), each with the path parameters
# that name the user's own parent object.
CREATES = [
    "/api/affiliations/",
    "/api/assistants/",
    "/api/models/",
    "/api/personas/",
    "/api/productions/",
    "/api/productions/{production_id}/frames/",
    "/api/scenarios/",
    "/api/worlds/",
    "/api/worlds/{world_pk}/lore/",
]


def every_field_required(raw: dict[str, Any]) -> dict[str, Any]:
    """A copy of the schema in which every writable property of every request body is
    required: what schemathesis draws then holds each documented field."""
    raw = copy.deepcopy(raw)
    for name, body in raw["components"]["schemas"].items():
        properties = body.get("properties")
        if properties and name.endswith("Request"):  # answers keep their own
            body["required"] = sorted(
                name for name, field in properties.items() if not field.get("readOnly")
            )
    return raw


# Valid requests only, drawn at random: no negative data, no other methods or media types.
POSITIVE = SchemathesisConfig.from_dict(
    {
        "generation": {"mode": "positive", "allow-x00": False},
        "phases": {"examples": {"enabled": False}, "coverage": {"enabled": False}},
    }
)
full_schema = schemathesis.openapi.from_dict(
    every_field_required(api_schema.raw_schema), config=POSITIVE
)
full_schema.app = api_schema.app
creates_schema = full_schema.include(
    method="POST",
    path_regex="^(" + "|".join(map(re.escape, CREATES)) + ")$",
)


def owned_references(user) -> dict[str, Any]:
    """Values of the user's own objects for the fields of a create that name one."""
    from lmix.models import LLMModel

    model = LLMModel.objects.filter(owner=user, provider="offline").earliest("created_at")
    group = AffiliationFactory(owner=user)
    persona = PersonaFactory(owner=user)
    assistants = [AssistantFactory(owner=user, model=model) for _ in range(2)]
    production = production_create(
        owner=user,
        name="Referenced",
        world=WorldFactory(owner=user),
        scenario=ScenarioFactory(owner=user),
        assistants=assistants,
    )
    return {
        "world": str(production.world_id),
        "world_pk": str(production.world_id),
        "scenario": str(production.scenario_id),
        "assistants": [str(a.pk) for a in assistants],
        "assistant": str(assistants[0].pk),
        "persona": str(persona.pk),
        "model": str(model.pk),
        "soft_model": str(model.pk),
        "medium_model": str(model.pk),
        "affiliation": str(group.pk),
        "affiliations": [str(group.pk)],
        "covert_affiliations": [str(group.pk)],
        "production_id": str(production.pk),
        # A frame's open seats are personas of its production's cast.
        "open_seats": [str(assistants[0].persona_id)],
        # Values the service checks beyond the schema, as a client would send them.
        "api_endpoint": "http://127.0.0.1:9/v1",
        "avatar_url": "",
        "keys": ["lighthouse"],
        "config": {},
        "config_override": {},
        "system_prompt_template": "",
        "is_default": False,
    }


@pytest.mark.django_db
@creates_schema.parametrize()
@settings(max_examples=6, **FUZZ_SETTINGS)
def test_every_documented_field_of_a_create_is_accepted(case, session_auth):
    """A create sent with every field its schema documents, naming the user's own objects,
    is accepted (a service without a keyword for one of them once answered 500)."""
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session

    session = Session.objects.get(session_key=session_auth["cookies"]["sessionid"])
    user = get_user_model().objects.get(pk=session.get_decoded()["_auth_user_id"])
    references = owned_references(user)
    for name in case.path_parameters:
        case.path_parameters[name] = references[name]
    body = case.body
    documented = set(body)
    for name in documented & set(references):
        body[name] = references[name]
    if case.path.endswith("/lore/"):  # a group's entry names its group and no persona
        body.update(layer="affiliation", persona=None)
    for name in documented & {"name", "model_id"}:  # unique among the user's objects
        body[name] = f"{body[name][:100]} {uuid.uuid4().hex[:8]}"
    for name, value in list(body.items()):
        # DRF trims text: whitespace alone is blank, which a minLength cannot say.
        if isinstance(value, str) and value and not value.strip():
            body[name] = "text"
    response = case.call(**session_auth)
    assert response.status_code in (200, 201), (case.formatted_path, body, response.text[:500])
    # What was answered is what the schema (and the TypeScript generated from it) says.
    case.validate_response(response, checks=[schemathesis.checks.response_schema_conformance])
    answer = response.json()
    for name in documented & set(answer) - {"api_key", "config", "config_override", "tags"}:
        if isinstance(body[name], bool):  # what was sent is what was stored
            assert answer[name] == body[name], name
