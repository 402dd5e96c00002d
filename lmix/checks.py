"""Startup checks (`manage.py check`, and every command that runs checks, `serve` included):
throttle rates that parse, and stored API keys that still decrypt."""

import logging

from django.conf import settings
from django.core import checks
from django.db import DatabaseError

from . import crypto
from .throttles import ATTEMPT_THROTTLES

logger = logging.getLogger(__name__)


@checks.register(checks.Tags.security)
def check_throttle_rates(**kwargs: object) -> list[checks.CheckMessage]:
    """Each login/signup rate is `<count>/<s|min|hour|day>` with a count of 1 or more (or
    empty: no limit)."""
    errors: list[checks.CheckMessage] = []
    for throttle in ATTEMPT_THROTTLES:
        try:
            count = throttle().num_requests
        except (ValueError, KeyError, IndexError):
            count = 0
        if count is not None and count < 1:
            name = throttle.rate_setting
            errors.append(
                checks.Error(
                    f"{name}={getattr(settings, name)!r} is not a rate.",
                    hint='Write it as "<count>/<s|min|hour|day>", e.g. "10/min".',
                    id="lmix.E001",
                )
            )
    return errors


def unreadable_key_count() -> int:
    """How many models store an API key that no longer decrypts."""
    from .models import LLMModel

    stored = LLMModel.objects.exclude(api_key_encrypted="").values_list(
        "api_key_encrypted", flat=True
    )
    return sum(not crypto.is_readable(ciphertext) for ciphertext in stored.iterator())


@checks.register(checks.Tags.security)
def check_unreadable_keys(**kwargs: object) -> list[checks.CheckMessage]:
    """Warn when stored API keys no longer decrypt (SECRET_KEY or LMIX_ENCRYPTION_KEY
    changed): those models fail until the keys are entered again."""
    try:
        count = unreadable_key_count()
    except DatabaseError:
        # No database yet (before the first migrate), or none reachable: nothing to count,
        # and a check must not stop migrate or any other command.
        return []
    except Exception as error:
        # Checks also run where the database may be off limits: Celery's Django fixup runs
        # them all when it imports task modules (worker start, the sweeper thread). An
        # advisory count must never stop a process from starting.
        logger.info("unreadable API keys not counted (%s)", type(error).__name__)
        return []
    if not count:
        return []
    if count == 1:
        what = "The stored API key of 1 model cannot be decrypted: the encryption key "
        what += "changed since it was saved. Calls with that model fail"
    else:
        what = f"The stored API keys of {count} models cannot be decrypted: the encryption "
        what += "key changed since they were saved. Calls with those models fail"
    return [
        checks.Warning(
            f"{what}, and the models API shows key_unreadable: true.",
            hint="Keys derive from LMIX_ENCRYPTION_KEY, or from SECRET_KEY when it is "
            "empty. Restore the value they were saved under: the old LMIX_ENCRYPTION_KEY, "
            "or the old SECRET_KEY (or keep a new SECRET_KEY and set LMIX_ENCRYPTION_KEY "
            "to the old one). Otherwise the models' owners must enter their keys again.",
            id="lmix.W001",
        )
    ]
