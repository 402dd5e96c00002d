"""The endpoint policy: what LMIX_LLM_ALLOWED_NETWORKS lets model endpoints reach."""

import ipaddress
import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from lmix.llm.network_policy import (
    InvalidHost,
    address_refusal,
    check_setting,
    current_policy,
    endpoint_refusal,
    host_address,
)

SERVICES_DEFAULT = ["public"]


@pytest.fixture
def services_default(settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = SERVICES_DEFAULT


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1",
        "http://[fd00::1]",
        "http://2130706433",
        "http://127.0.0.1:5432",
        "http://0177.0.0.1",
        "http://0x7f.0.0.1",
        "http://0x7f000001",
        "http://127.1",
        "http://[::ffff:127.0.0.1]",
        "http://[::ffff:7f00:1]",
        "http://[64:ff9b::a00:1]",  # NAT64 of 10.0.0.1
        "http://[2002:7f00:1::1]",  # 6to4 of 127.0.0.1
        "http://localhost:11434",
        "http://api.localhost",
        "http://LOCALHOST.",
        "http://[::1]:8000",
        "http://192.168.1.20:11434",
        "http://172.16.0.1",
        "http://100.64.0.1",
        "http://0.0.0.0:8000",
        "http://0",
        "http://[::]",
        "http://224.0.0.1",
        "http://192.0.2.1",  # documentation space
        "http://[fe80::1%25eth0]",
        "http://metadata.google.internal/computeMetadata/v1/",
    ],
)
def test_every_notation_of_an_inner_address_is_refused_by_the_services_default(
    services_default, url
):
    assert endpoint_refusal(url) is not None


@pytest.mark.parametrize(
    "url",
    [
        "https://api.openai.com/v1",
        "https://api.anthropic.com",
        "http://8.8.8.8:8080/v1",
        "https://[2606:4700:4700::1111]/v1",
        "https://llm.example.com/v1",  # a name: judged by what it resolves to, on connect
        "offline://narrator",
    ],
)
def test_public_addresses_names_and_the_offline_narrator_pass_the_services_default(
    services_default, url
):
    assert endpoint_refusal(url) is None


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0X7F000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("192.168.257", "192.168.1.1"),
        ("1.1.1.1.", "1.1.1.1"),
        ("[::ffff:192.168.0.1]", "192.168.0.1"),
        ("::ffff:c0a8:1", "192.168.0.1"),
        ("64:ff9b::a00:1", "10.0.0.1"),
        ("[::1]", "::1"),
        ("llm.example.com", None),
        ("0x.example", None),
    ],
)
def test_odd_notations_are_read_as_the_address_they_reach(host, address):
    found = host_address(host)
    assert (str(found) if found else None) == address


@pytest.mark.parametrize(
    "host", ["256.1.1.1", "1.2.3.4.5", "4294967296", "08.0.0.1", "a.1", "1.2.3.0x100"]
)
def test_a_number_like_host_that_is_no_address_is_invalid(host):
    with pytest.raises(InvalidHost):
        host_address(host)
    assert endpoint_refusal(f"http://{host}/v1") == (
        "The endpoint's host is not a valid address or name."
    )


@pytest.mark.parametrize("host", ["exa mple", "a..b", "llm%2fbox", "llm!box"])
def test_a_name_with_odd_characters_is_invalid(services_default, host):
    assert endpoint_refusal(f"http://{host}:8000/v1") == (
        "The endpoint's host is not a valid address or name."
    )


@pytest.mark.parametrize("url", ["ftp://example.com", "file:///etc/passwd", "gopher://x", "x"])
def test_only_http_and_https_urls_are_endpoints(services_default, url):
    assert endpoint_refusal(url) == "Model endpoints must be http:// or https:// URLs."


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254",
        "http://169.254.170.2",
        "http://[fd00:ec2::254]",
        "http://100.100.100.200",
        "http://168.63.129.16",
        "http://[::ffff:169.254.169.254]",
        "http://metadata.google.internal",
        "http://metadata.google.internal.",
        "http://instance-data",
    ],
)
def test_metadata_services_are_refused_whatever_the_setting_lists(settings, url):
    settings.LMIX_LLM_ALLOWED_NETWORKS = [
        "public",
        "private",
        "loopback",
        "0.0.0.0/0",
        "::/0",
        "169.254.0.0/16",
        "fd00:ec2::/64",
        "100.100.100.200",
        "metadata.google.internal",
        "instance-data",
    ]
    refusal = endpoint_refusal(url)
    assert refusal is not None and "metadata" in refusal


def test_link_local_is_reached_only_through_an_entry_inside_link_local_space(settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public", "private", "loopback", "0.0.0.0/0", "::/0"]
    assert "link-local" in endpoint_refusal("http://169.254.10.3")
    assert "link-local" in endpoint_refusal("http://[fe80::1]")

    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public", "169.254.10.0/24", "fe80::/64"]
    assert endpoint_refusal("http://169.254.10.3") is None
    assert endpoint_refusal("http://[fe80::1]") is None
    assert endpoint_refusal("http://169.254.11.3") is not None


def test_an_operator_allows_one_lan_ollama_by_address(settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public", "192.168.1.20/32"]
    assert endpoint_refusal("http://192.168.1.20:11434") is None
    assert endpoint_refusal("http://192.168.1.21:11434") is not None
    assert endpoint_refusal("http://localhost:11434") is not None
    assert endpoint_refusal("https://api.openai.com/v1") is None


def test_an_operator_allows_a_lan_ollama_by_name_whatever_it_resolves_to(settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public", "Ollama.LAN"]
    assert endpoint_refusal("http://ollama.lan:11434") is None
    assert address_refusal("ollama.lan", ["192.168.1.20"]) is None
    assert address_refusal("ollama.lan", ["127.0.0.1"]) is None
    # ...but not to metadata, nor to link-local space no entry names.
    assert address_refusal("ollama.lan", ["169.254.169.254"]) is not None
    assert address_refusal("ollama.lan", ["169.254.1.1"]) is not None
    # Another name that resolves to the same address is not listed.
    assert address_refusal("other.lan", ["192.168.1.20"]) is not None


def test_a_name_is_refused_when_any_address_it_resolves_to_is(services_default):
    assert address_refusal("llm.example.com", ["8.8.8.8"]) is None
    refusal = address_refusal("llm.example.com", ["8.8.8.8", "10.0.0.3"])
    assert refusal == (
        "llm.example.com resolves to a private address; model endpoints on this server may "
        "reach only public addresses (LMIX_LLM_ALLOWED_NETWORKS)."
    )
    assert "10.0.0.3" not in refusal  # the server is no resolver of inner names
    assert address_refusal("llm.example.com", ["::ffff:127.0.0.1"]) is not None
    assert address_refusal("llm.example.com", ["fe80::1%eth0"]) is not None


def test_a_refusal_says_why_and_what_is_allowed_without_the_operators_list(settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public", "192.168.7.0/24", "gpu.corp"]
    refusal = endpoint_refusal("http://user:hunter2@2130706433:5432/v1?key=sk-123")
    assert refusal == (
        "2130706433 (127.0.0.1) is a loopback address; model endpoints on this server may "
        "reach only public addresses, the networks and hosts the operator listed "
        "(LMIX_LLM_ALLOWED_NETWORKS)."
    )
    for secret in ("hunter2", "sk-123", "192.168.7", "gpu.corp"):
        assert secret not in refusal


def test_an_empty_setting_leaves_only_the_offline_narrator(settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = []
    assert endpoint_refusal("offline://narrator") is None
    assert "nothing (only the offline narrator)" in endpoint_refusal("https://8.8.8.8")


def test_the_setting_is_also_read_from_a_comma_separated_string(settings):
    settings.LMIX_LLM_ALLOWED_NETWORKS = " public , 10.0.0.0/8 ,, ollama.lan "
    policy = current_policy()
    assert policy.words == {"public"} and policy.names == {"ollama.lan"}
    assert policy.networks == (ipaddress.ip_network("10.0.0.0/8"),)


@pytest.mark.parametrize(
    "entry", ["192.168.1.0/33", "0177.0.0.1", "http://ollama.lan", "two words", "lan*"]
)
def test_a_malformed_entry_stops_the_server_at_start(settings, entry):
    settings.LMIX_LLM_ALLOWED_NETWORKS = ["public", entry]
    with pytest.raises(ImproperlyConfigured, match="LMIX_LLM_ALLOWED_NETWORKS"):
        current_policy()
    (error,) = check_setting()
    assert error.id == "lmix.llm.E001" and repr(entry) in error.msg


def _default_in(**env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CELERY_BROKER_URL")}
    environ.pop("LMIX_LLM_ALLOWED_NETWORKS", None)
    code = "import config.settings as s; print(','.join(s.LMIX_LLM_ALLOWED_NETWORKS))"
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**environ, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_embedded_mode_adds_loopback_and_services_mode_reaches_public_addresses_only():
    assert _default_in() == "public,loopback"
    assert _default_in(REDIS_URL="redis://127.0.0.1:6379/15") == "public"
    assert _default_in(CELERY_BROKER_URL="redis://127.0.0.1:6379/15") == "public"
    assert _default_in(LMIX_LLM_ALLOWED_NETWORKS="public,192.168.1.20/32") == (
        "public,192.168.1.20/32"
    )
    assert _default_in(LMIX_LLM_ALLOWED_NETWORKS="") == ""
