"""What the OpenAPI schema (drf-spectacular) needs to know of our own classes: the session
authentication is the usual cookie session, so the schema says so (without it every view
logs that its authenticator could not be resolved)."""

from drf_spectacular.authentication import SessionScheme


class LmixSessionScheme(SessionScheme):
    target_class = "lmix.authentication.SessionAuthentication"
