"""Close codes LMiX sockets end with, shared by the consumer base and `revoke`."""

CLOSE_UNAUTHENTICATED = 4401  # no session: the client goes to the login page
CLOSE_FORBIDDEN = 4403  # refused, or access revoked: the client stops reconnecting
CLOSE_GONE = 4404  # its frame was closed for good or deleted: the client stops reconnecting
