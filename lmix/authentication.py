"""Session authentication that tells "not signed in" (401) apart from "not allowed" (403)."""

from rest_framework import authentication
from rest_framework.request import Request


class SessionAuthentication(authentication.SessionAuthentication):
    def authenticate_header(self, request: Request) -> str:
        # Any value turns DRF's NotAuthenticated into a 401; "Session" names no scheme a
        # browser would answer with a password prompt.
        return 'Session realm="lmix"'
