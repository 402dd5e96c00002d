"""The attempt throttles' parts (lmix/throttles.py): atomic counting, addresses, usernames."""

import threading
import time
from types import SimpleNamespace

from lmix.throttles import LoginAddressThrottle, client_address, normalize_username
from tests.waiting import wait_for


def request_from(address: str, forwarded: str = "") -> SimpleNamespace:
    meta = {"REMOTE_ADDR": address}
    if forwarded:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return SimpleNamespace(META=meta, data={})


def test_parallel_attempts_never_exceed_the_limit(settings):
    settings.LMIX_LOGIN_RATE_PER_ADDRESS = "5/min"
    start = threading.Barrier(40)
    allowed: list[bool] = []

    def attempt() -> None:
        throttle = LoginAddressThrottle()
        start.wait()
        allowed.append(throttle.allow_request(request_from("10.9.9.9"), None))

    threads = [threading.Thread(target=attempt) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert allowed.count(True) == 5


def test_a_refund_gives_one_attempt_back(settings):
    settings.LMIX_LOGIN_RATE_PER_ADDRESS = "1/min"
    first, second, third = (LoginAddressThrottle() for _ in range(3))
    assert first.allow_request(request_from("10.9.9.8"), None)
    assert not second.allow_request(request_from("10.9.9.8"), None)
    second.refund()
    first.refund()
    assert third.allow_request(request_from("10.9.9.8"), None)
    assert not LoginAddressThrottle().allow_request(request_from("10.9.9.8"), None)


def test_ipv6_clients_count_per_64_and_mapped_ipv4_as_ipv4(settings):
    assert client_address(request_from("2001:db8:1:2:aaaa::1")) == "2001:db8:1:2::/64"
    assert client_address(request_from("2001:db8:1:2:bbbb::9")) == "2001:db8:1:2::/64"
    assert client_address(request_from("::ffff:10.0.0.1")) == "10.0.0.1"
    assert client_address(request_from("10.0.0.1", "1.2.3.4")) == "10.0.0.1"
    settings.LMIX_TRUSTED_PROXY_COUNT = 2
    assert client_address(request_from("10.0.0.1", "forged, 1.2.3.4, 10.0.0.2")) == "1.2.3.4"
    assert client_address(request_from("10.0.0.1", "1.2.3.4")) == "1.2.3.4"


def test_usernames_share_a_bucket_whatever_their_case_and_padding():
    assert normalize_username(" Ada ") == normalize_username("ADA") == "ada"
    assert normalize_username("Straße") == normalize_username("STRASSE")
    assert normalize_username("   ") is None and normalize_username(["ada"]) is None


def test_a_window_opens_with_its_first_attempt_and_closes_a_period_later(settings):
    settings.LMIX_LOGIN_RATE_PER_ADDRESS = "1/s"
    opened = time.monotonic()
    assert LoginAddressThrottle().allow_request(request_from("10.9.9.7"), None)
    refused = LoginAddressThrottle()
    assert not refused.allow_request(request_from("10.9.9.7"), None)
    assert 0 < refused.wait() <= 1
    # Refused attempts in the window do not extend it: it closes a second after it opened.
    wait_for(lambda: LoginAddressThrottle().allow_request(request_from("10.9.9.7"), None), 5)
    assert time.monotonic() - opened >= 0.9
