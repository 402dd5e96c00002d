"""Database sessions that ignore a malformed session cookie instead of querying with it."""

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore


class SessionStore(DatabaseSessionStore):
    def _validate_session_key(self, key: str | None) -> bool:
        # Django makes keys of lowercase letters and digits. Anything else (a NUL byte,
        # which PostgreSQL refuses in a query) is no session at all: an anonymous request.
        return bool(key) and len(key) >= 8 and key.isascii() and key.isalnum()
