"""Close codes LMiX sockets end with, shared by the consumer base and `revoke`."""

CLOSE_UNAUTHENTICATED = 4401  # no session: the client goes to the login page
CLOSE_FORBIDDEN = 4403  # refused, or access revoked: the client stops reconnecting
CLOSE_GONE = 4404  # its frame was closed for good or deleted: the client stops reconnecting
CLOSE_TOO_SLOW = 4408  # its client read too slowly: it reconnects and re-reads over REST
CLOSE_TOO_MANY = 4429  # this user has LMIX_SOCKETS_PER_USER_PER_FRAME open on this page already
CLOSE_TOO_LARGE = 1009  # a message over LMIX_SOCKET_MAX_MESSAGE_BYTES (after its error frame)
