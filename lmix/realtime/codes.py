"""Close codes LMiX sockets end with, shared by the consumer base and `revoke`."""

CLOSE_UNAUTHENTICATED = 4401  # no session: the client goes to the login page
CLOSE_FORBIDDEN = 4403  # refused, or access revoked: the client stops reconnecting
