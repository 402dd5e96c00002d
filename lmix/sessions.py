"""Sessions read from the cache (Redis when configured) and kept in the database, ignoring
a malformed session cookie instead of querying with it.

Every API request and socket reads its session: from Redis that is one small GET instead
of a database query; the database copy keeps sessions across a cache restart or eviction.
"""

from django.contrib.sessions.backends.cached_db import SessionStore as CachedDBSessionStore


class SessionStore(CachedDBSessionStore):
    def _validate_session_key(self, key: str | None) -> bool:
        # Django makes keys of lowercase letters and digits. Anything else (a NUL byte,
        # which PostgreSQL refuses in a query) is no session at all: an anonymous request.
        return bool(key) and len(key) >= 8 and key.isascii() and key.isalnum()
