"""Throttles counted in the cache: logins and signups per username and per address, code
lookups (invites, spectator links) per user and per address, intentions per seat and per user.

Counts live in Django's cache (Redis when REDIS_URL is set, so every web process shares
them). A login attempt is counted before the password is checked, with one atomic
increment, so parallel guesses cannot all slip in under the limit; a successful login
gives its attempt back, so only failures use up the budget and the owner of an account
(or a class behind one NAT) is never throttled for logging in. Every signup attempt
counts: creating accounts in bulk is what the signup limit is for. docs/security.md
("Login throttling", "Play limits") explains them; tests/lmix/test_auth.py,
test_throttles.py and tests/synthesis/test_play_limits.py test them.
"""

import contextlib
import hashlib
import ipaddress
import math
import unicodedata
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from .errors import ApplicationError


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
    return peer_address(
        request.META.get("REMOTE_ADDR", ""), request.META.get("HTTP_X_FORWARDED_FOR", "")
    )


def peer_address(address: str, forwarded: str) -> str:
    """`client_address` from the peer's address and its X-Forwarded-For header (a
    socket's scope has no request)."""
    proxies = settings.LMIX_TRUSTED_PROXY_COUNT
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
    # What a refusal says was hit ("Too many …"); empty: the view's `throttled_message`.
    limit_message = ""
    cache_format = "throttle:%(scope)s:%(ident)s"

    def get_rate(self) -> str | None:
        return getattr(settings, self.rate_setting) or None

    def ident(self, request: Request) -> str | None:
        """What the attempts are counted per; None leaves the request uncounted."""
        raise NotImplementedError

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        ident = self.ident(request)
        return None if ident is None else self._key(ident)

    def _key(self, ident: str) -> str:
        # Hashed: usernames and addresses are not kept in the cache as typed.
        digest = hashlib.sha256(ident.encode()).hexdigest()[:32]
        return self.cache_format % {"scope": self.scope, "ident": digest}

    def allow_request(self, request: Request, view: Any) -> bool:
        self.key = None
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        return True if key is None else self._count(key)

    def allow(self, ident: str) -> bool:
        """`allow_request` for a service, which has no request: count one attempt for
        `ident` (a seat, a user)."""
        self.key = None
        return True if self.rate is None else self._count(self._key(ident))

    def _count(self, key: str) -> bool:
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

    def limit_text(self) -> str:
        """The limit, as a refusal names it: `Too many … (at most 10 a minute).`"""
        unit = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}[self.duration]
        return f"{self.limit_message} (at most {self.num_requests} a {unit})."


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


class CodeLookupUserThrottle(AttemptThrottle):
    """Invite previews, joins and spectator-link lookups per signed-in user: each reads a
    frame by a code (the spectator view reads its whole scene), so a client repeating them
    loads the database, whether its codes are right or not."""

    scope = "code_lookup_user"
    rate_setting = "LMIX_CODE_LOOKUP_RATE_PER_USER"
    limit_message = "Too many invite and spectator link lookups from you"

    def ident(self, request: Request) -> str | None:
        user = request.user
        return f"user:{user.pk}" if user.is_authenticated else None


class CodeLookupAddressThrottle(AttemptThrottle):
    """The same lookups per address, whichever accounts make them."""

    scope = "code_lookup_address"
    rate_setting = "LMIX_CODE_LOOKUP_RATE_PER_ADDRESS"
    limit_message = "Too many invite and spectator link lookups from this address"

    def ident(self, request: Request) -> str | None:
        return client_address(request)


class LiquidSeatThrottle(AttemptThrottle):
    """Intentions submitted for one seat, by whoever writes for it (counted by
    synthesis/liquid.py with `allow`, once the writer may write for the seat)."""

    scope = "liquid_seat"
    rate_setting = "LMIX_LIQUID_RATE_PER_SEAT"
    limit_message = "Too many intentions for this character"


class LiquidEditSeatThrottle(AttemptThrottle):
    """Edits of one seat's intentions: each edit is analysed again, like a new one."""

    scope = "liquid_edit_seat"
    rate_setting = "LMIX_LIQUID_EDIT_RATE_PER_SEAT"
    limit_message = "Too many edits of this character's intentions"


class LiquidUserThrottle(AttemptThrottle):
    """Intentions and edits per user, over all the seats they write for in every frame."""

    scope = "liquid_user"
    rate_setting = "LMIX_LIQUID_RATE_PER_USER"
    limit_message = "Too many intentions and edits from you, over all your characters"


# Their rate settings are checked at startup (lmix/checks.py).
ATTEMPT_THROTTLES = (
    LoginUsernameThrottle,
    LoginAddressThrottle,
    SignupAddressThrottle,
    AccountPasswordThrottle,
    CodeLookupUserThrottle,
    CodeLookupAddressThrottle,
    LiquidSeatThrottle,
    LiquidEditSeatThrottle,
    LiquidUserThrottle,
)


def try_again(wait: float) -> tuple[int, str]:
    """Whole seconds to wait (Retry-After rounds up), and the sentence that says so."""
    seconds = max(math.ceil(wait), 1)
    return seconds, f"Try again in {seconds} second{'' if seconds == 1 else 's'}."


def attempts_count(counted: Sequence[tuple[AttemptThrottle, str]]) -> None:
    """Count one attempt in each throttle for its ident (a service's throttling).

    Raises:
        ApplicationError: 429 with `retry_after`, when any throttle refuses; what the
            others counted is given back (nothing was attempted). Its message names the
            limit that frees last and says when to try again.
    """
    refused = [throttle for throttle, ident in counted if not throttle.allow(ident)]
    if not refused:
        return
    for throttle, _ in counted:
        throttle.refund()
    last = max(refused, key=lambda throttle: throttle.wait())
    seconds, sentence = try_again(last.wait())
    raise ApplicationError(f"{last.limit_text()} {sentence}", status_code=429, retry_after=seconds)


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
            last = max(refused, key=lambda throttle: throttle.wait())
            if last.limit_message:  # the limit hit, named
                raise TooManyAttempts(last.wait(), detail=last.limit_text())
            self.throttled(request, last.wait())

    def throttled(self, request: Request, wait: float | None) -> None:
        raise TooManyAttempts(wait, detail=self.throttled_message)

    def attempt_succeeded(self) -> None:
        """Give back this request's attempt to the throttles that count failures only."""
        for throttle in getattr(self, "_attempt_throttles", []):
            if throttle.refund_on_success:
                throttle.refund()


class CodeLookupThrottledMixin(AttemptThrottledMixin):
    """For the views that look a frame up by a code: every lookup counts, per user and
    per address."""

    throttle_classes = [CodeLookupUserThrottle, CodeLookupAddressThrottle]
