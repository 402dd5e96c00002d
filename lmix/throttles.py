"""Login and signup throttles: attempts per username and per address, counted in the cache.

Counts live in Django's cache (Redis when REDIS_URL is set, so every web process shares
them). A login attempt is counted before the password is checked, with one atomic
increment, so parallel guesses cannot all slip in under the limit; a successful login
gives its attempt back, so only failures use up the budget and the owner of an account
(or a class behind one NAT) is never throttled for logging in. Every signup attempt
counts: creating accounts in bulk is what the signup limit is for. docs/security.md
("Login throttling") explains it; tests/lmix/test_auth.py and test_throttles.py test it.
"""

import contextlib
import hashlib
import ipaddress
import unicodedata
from typing import Any

from django.conf import settings
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle


def normalize_username(value: Any) -> str | None:
    """The bucket name of a username as typed: NFKC, stripped, case-folded (so `Ada`,
    ` ada ` and `ADA` share one); None when it is no string or empty."""
    if not isinstance(value, str):
        return None
    return unicodedata.normalize("NFKC", value).strip().casefold() or None


def client_address(request: Request) -> str:
    """The client's address: REMOTE_ADDR, or, behind LMIX_TRUSTED_PROXY_COUNT proxies, the
    X-Forwarded-For entry the outermost one added (entries further left are the client's
    say and can be forged). IPv6 counts per /64, the block one host usually holds."""
    address = request.META.get("REMOTE_ADDR", "")
    proxies = settings.LMIX_TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies > 0 and forwarded:
        entries = [entry.strip() for entry in forwarded.split(",")]
        address = entries[-min(proxies, len(entries))]
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address or "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class AttemptThrottle(SimpleRateThrottle):
    """Attempts in windows of the rate's period, counted with an atomic increment;
    an attempt can be given back (`refund`). The rate is the Django setting named by
    `rate_setting`, read for every request."""

    rate_setting = ""
    # Whether a successful attempt is given back (only failures count).
    refund_on_success = False
    cache_format = "throttle:%(scope)s:%(ident)s"

    def get_rate(self) -> str | None:
        return getattr(settings, self.rate_setting) or None

    def ident(self, request: Request) -> str | None:
        """What the attempts are counted per; None leaves the request uncounted."""
        raise NotImplementedError

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        ident = self.ident(request)
        if ident is None:
            return None
        # Hashed: usernames and addresses are not kept in the cache as typed.
        digest = hashlib.sha256(ident.encode()).hexdigest()[:32]
        return self.cache_format % {"scope": self.scope, "ident": digest}

    def allow_request(self, request: Request, view: Any) -> bool:
        self.key = None
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        self.now = self.timer()
        # A window opens with its first attempt and closes `duration` later, when both
        # keys expire; `add` keeps the first writer's values.
        self.cache.add(f"{key}:start", self.now, self.duration)
        self.cache.add(key, 0, self.duration)
        try:
            count = self.cache.incr(key)
        except ValueError:  # the window closed between add and incr
            self.cache.add(key, 1, self.duration)
            count = 1
        self.key = key
        self.window_end = self.cache.get(f"{key}:start", self.now) + self.duration
        return count <= self.num_requests

    def wait(self) -> float:
        return max(self.window_end - self.timer(), 0.001)

    def refund(self) -> None:
        """Give the attempt counted by `allow_request` back."""
        if self.key is None:
            return
        with contextlib.suppress(ValueError):  # the window has closed, its count is gone
            self.cache.decr(self.key)
        self.key = None


class LoginUsernameThrottle(AttemptThrottle):
    """Failed logins per username, whoever tries it: stops guessing one account's password."""

    scope = "login_username"
    rate_setting = "LMIX_LOGIN_RATE_PER_USERNAME"
    refund_on_success = True

    def ident(self, request: Request) -> str | None:
        data = request.data  # a malformed body raises ParseError: a 400, as in the view
        return normalize_username(data.get("username") if isinstance(data, dict) else None)


class LoginAddressThrottle(AttemptThrottle):
    """Failed logins per address, whichever usernames: stops trying many accounts."""

    scope = "login_address"
    rate_setting = "LMIX_LOGIN_RATE_PER_ADDRESS"
    refund_on_success = True

    def ident(self, request: Request) -> str | None:
        return client_address(request)


class SignupAddressThrottle(AttemptThrottle):
    """Signup attempts per address, successful or not."""

    scope = "signup_address"
    rate_setting = "LMIX_SIGNUP_RATE_PER_ADDRESS"

    def ident(self, request: Request) -> str | None:
        return client_address(request)


class AccountPasswordThrottle(AttemptThrottle):
    """Wrong current passwords per signed-in user (changing the password, deleting the
    account): a session left open must not become a way to guess the password. Shares the
    per-username login rate."""

    scope = "account_password"
    rate_setting = "LMIX_LOGIN_RATE_PER_USERNAME"
    refund_on_success = True

    def ident(self, request: Request) -> str | None:
        user = request.user
        return f"user:{user.pk}" if user.is_authenticated else None


# Their rate settings are checked at startup (lmix/checks.py).
ATTEMPT_THROTTLES = (
    LoginUsernameThrottle,
    LoginAddressThrottle,
    SignupAddressThrottle,
    AccountPasswordThrottle,
)


class TooManyAttempts(Throttled):
    """429 whose message says when to try again (DRF adds the Retry-After header)."""

    extra_detail_singular = "Try again in {wait} second."
    extra_detail_plural = "Try again in {wait} seconds."


class AttemptThrottledMixin:
    """For an APIView whose `throttle_classes` are AttemptThrottles: a refused request gives
    back what the other throttles counted for it (it was never attempted), and the view
    calls `attempt_succeeded()` to give back the attempts of the throttles that count
    failures only."""

    throttled_message = "Too many attempts."

    def check_throttles(self, request: Request) -> None:
        self._attempt_throttles = self.get_throttles()
        refused = [t for t in self._attempt_throttles if not t.allow_request(request, self)]
        if refused:
            for throttle in self._attempt_throttles:
                throttle.refund()
            self.throttled(request, max(throttle.wait() for throttle in refused))

    def throttled(self, request: Request, wait: float | None) -> None:
        raise TooManyAttempts(wait, detail=self.throttled_message)

    def attempt_succeeded(self) -> None:
        """Give back this request's attempt to the throttles that count failures only."""
        for throttle in getattr(self, "_attempt_throttles", []):
            if throttle.refund_on_success:
                throttle.refund()
