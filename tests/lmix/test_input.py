"""Malformed JSON bodies (nested too deeply, lone surrogates) get a clear 400, never a 500."""

import json

import pytest
from django.conf import settings
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from authoring.models import World
from lmix.parsers import json_depth_exceeds
from tests.factories import LLMModelFactory, PersonaFactory

pytestmark = pytest.mark.django_db

MARKER = "MARKER-4417"
SURROGATE_MESSAGE = (
    "JSON text holds an unpaired surrogate (\\ud800\u2013\\udfff), which is not valid Unicode."
)


def nested(depth: int, inner: str = "1") -> str:
    """JSON text of `depth` nested arrays around `inner`; `nested(2)` is `[[1]]`."""
    return "[" * depth + inner + "]" * depth


def depth_message() -> str:
    return f"JSON is nested deeper than {settings.LMIX_JSON_MAX_DEPTH} levels."


def post_raw(client, path: str, text: str, content_type: str = "application/json"):
    """Send `text` as the body exactly as written (escapes such as \\ud800 stay escapes)."""
    return client.generic("POST", path, text.encode(), content_type=content_type)


def world_body(extra: str) -> str:
    return f'{{"name": "Mars", "description": "Red dust.", "extra": {extra}}}'


def login_body(username: str) -> str:
    return f'{{"username": {username}, "password": "a-good-password-1"}}'


# Nesting


def test_a_body_nested_exactly_to_the_limit_is_accepted(api):
    # The object is one level, so the array inside it may take the rest.
    limit = settings.LMIX_JSON_MAX_DEPTH
    response = post_raw(api, "/api/worlds", world_body(nested(limit - 1)))
    assert response.status_code == 201, response.content
    assert World.objects.filter(name="Mars").exists()


def test_a_body_one_level_past_the_limit_is_a_400_that_says_why(api):
    limit = settings.LMIX_JSON_MAX_DEPTH
    response = post_raw(api, "/api/worlds", world_body(nested(limit, f'"{MARKER}"')))
    assert response.status_code == 400
    assert response.json() == {"detail": depth_message()}
    assert MARKER not in response.content.decode()
    assert not World.objects.exists()


@pytest.mark.parametrize("depth", [100, 100_000])
def test_anonymous_login_with_a_deeply_nested_body_is_a_400(anon_client, depth):
    response = post_raw(anon_client, "/api/auth/login", login_body(nested(depth, f'"{MARKER}"')))
    assert response.status_code == 400
    assert response.json() == {"detail": depth_message()}
    assert MARKER not in response.content.decode()


def test_anonymous_login_at_the_limit_reaches_validation(anon_client):
    limit = settings.LMIX_JSON_MAX_DEPTH
    response = post_raw(anon_client, "/api/auth/login", login_body(nested(limit - 1)))
    assert response.status_code == 400
    assert "username" in response.json()["errors"]


def test_deeply_nested_objects_count_like_arrays(api):
    deep = '{"a": ' * 1000 + "1" + "}" * 1000
    response = post_raw(api, "/api/worlds", world_body(deep))
    assert response.status_code == 400
    assert response.json() == {"detail": depth_message()}


def test_brackets_inside_strings_do_not_count_as_nesting(api):
    text = json.dumps("[{" * 500 + '\\"[' + "}]" * 500)
    response = post_raw(api, "/api/worlds", f'{{"name": "Mars", "description": {text}}}')
    assert response.status_code == 201, response.content


def test_the_limit_is_the_setting(api, settings):
    settings.LMIX_JSON_MAX_DEPTH = 3
    assert post_raw(api, "/api/worlds", world_body(nested(2))).status_code == 201
    response = post_raw(api, "/api/worlds", world_body(nested(3)))
    assert response.json() == {"detail": "JSON is nested deeper than 3 levels."}


def reference_depth(value) -> int:
    """Nesting depth of parsed JSON, written recursively and independently of the scanner."""
    if isinstance(value, dict):
        return 1 + max(map(reference_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(reference_depth, value), default=0)
    return 0


# Strings mostly of the characters that matter to a scan: brackets, quotes, backslashes.
json_texts = st.text(alphabet='[]{}"\\:, a') | st.text()
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | json_texts,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(json_texts, children, max_size=3)
    ),
    max_leaves=20,
)


@hypothesis_settings(max_examples=300, deadline=None)
@given(value=json_values, wrap=st.integers(0, 40), limit=st.integers(0, 40))
def test_the_depth_scan_agrees_with_a_recursive_count(value, wrap, limit):
    # Strings hold brackets, quotes and backslashes; ensure_ascii=False keeps them raw.
    for _ in range(wrap):
        value = [value]
    text = json.dumps(value, ensure_ascii=False)
    assert json_depth_exceeds(text, limit) == (reference_depth(value) > limit)


def test_an_unterminated_string_ends_the_scan_and_the_body_is_still_a_400(api):
    assert json_depth_exceeds('"' + "[" * 100, 32) is False
    response = post_raw(api, "/api/worlds", '{"name": "' + "[" * 100_000)
    assert response.status_code == 400
    assert response.json()["detail"].startswith("JSON parse error")


# Lone surrogates

SURROGATE_WORLDS = {
    "in a value": f'{{"name": "{MARKER} \\ud800", "description": ""}}',
    "in a key": f'{{"name": "Mars", "description": "", "{MARKER}\\udfff": 1}}',
    "nested in a list": f'{{"name": "Mars", "description": "", "x": [1, ["{MARKER}\\udc00"]]}}',
    "in an inner key": f'{{"name": "Mars", "x": {{"a": {{"\\udbff{MARKER}": 1}}}}}}',
    "a low half before a high half": f'{{"name": "{MARKER}\\ude00\\ud83d", "description": ""}}',
    "a high half at the end": f'{{"name": "{MARKER}\\uD83D", "description": ""}}',
}


@pytest.mark.parametrize("body", SURROGATE_WORLDS.values(), ids=SURROGATE_WORLDS)
def test_a_lone_surrogate_in_an_authenticated_body_is_a_400_that_does_not_echo_it(api, body):
    response = post_raw(api, "/api/worlds", body)
    assert response.status_code == 400
    assert response.json() == {"detail": SURROGATE_MESSAGE}
    assert MARKER not in response.content.decode()
    assert not World.objects.exists()


SURROGATE_LOGINS = {
    "in the username": login_body(f'"{MARKER}\\ud800"'),
    "in a key": f'{{"username": "u", "password": "p", "\\ud800{MARKER}": 1}}',
    "nested": login_body(f'["{MARKER}", {{"k": "\\udc01"}}]'),
}


@pytest.mark.parametrize("body", SURROGATE_LOGINS.values(), ids=SURROGATE_LOGINS)
def test_a_lone_surrogate_in_an_anonymous_login_is_a_400(anon_client, body):
    response = post_raw(anon_client, "/api/auth/login", body)
    assert response.status_code == 400
    assert response.json() == {"detail": SURROGATE_MESSAGE}
    assert MARKER not in response.content.decode()


def test_a_lone_surrogate_in_a_choice_or_id_field_is_a_400(api, user):
    model_body = (
        '{"name": "M", "provider": "\\ud800", "api_endpoint": "https://example.com/v1",'
        ' "model_id": "m"}'
    )
    assert post_raw(api, "/api/models", model_body).json() == {"detail": SURROGATE_MESSAGE}
    model, persona = LLMModelFactory(owner=user), PersonaFactory(owner=user)
    assistant_body = f'{{"persona": "{persona.id}\\udfff", "model": "{model.id}"}}'
    response = post_raw(api, "/api/assistants", assistant_body)
    assert response.status_code == 400
    assert response.json() == {"detail": SURROGATE_MESSAGE}


def test_a_paired_surrogate_emoji_is_valid_and_stored(api):
    body = '{"name": "Mars \\ud83d\\ude00", "description": "raw \U0001f680 and \\\\ud800"}'
    response = post_raw(api, "/api/worlds", body)
    assert response.status_code == 201, response.content
    world = World.objects.get()
    assert world.name == "Mars \U0001f600"
    # An escaped backslash before "ud800" is six ordinary characters, not a surrogate.
    assert world.description == "raw \U0001f680 and \\ud800"


def test_a_surrogate_that_a_charset_decodes_to_is_a_400(api):
    # UTF-7 is a text encoding Django accepts, and "+2AA-" decodes to a lone \ud800.
    body = '{"name": "+2AA-", "description": ""}'
    response = post_raw(api, "/api/worlds", body, "application/json; charset=utf-7")
    assert response.status_code == 400
    assert response.json() == {"detail": SURROGATE_MESSAGE}


def test_a_number_too_large_for_a_float_is_a_400_not_infinity(api):
    response = post_raw(api, "/api/worlds", world_body("-1e999"))
    assert response.status_code == 400
    assert response.json() == {"detail": "JSON holds a number too large to represent."}
    large = post_raw(api, "/api/worlds", world_body("[1e308, 10000000000000000000000]"))
    assert large.status_code == 201, large.content


def test_a_body_that_is_not_valid_utf8_is_a_400_that_does_not_echo_it(api):
    body = f'{{"name": "{MARKER}'.encode() + b'\xed\xa0\x80"}'
    response = api.generic("POST", "/api/worlds", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"detail": "JSON parse error - the body is not valid utf-8."}
    assert MARKER not in response.content.decode()


@pytest.mark.parametrize("key", ['"\\000abcdefghijklmnop"', "abc\x7fdefghijkl", "short"])
def test_a_malformed_session_cookie_is_no_session_not_a_500(anon_client, key):
    anon_client.cookies[settings.SESSION_COOKIE_NAME] = key
    assert anon_client.get("/api/auth/me").status_code == 401
    assert anon_client.get("/api/worlds").status_code == 401
