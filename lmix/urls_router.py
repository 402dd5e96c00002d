"""The API router: `/api/models` and `/api/models/` both work."""

from rest_framework.routers import SimpleRouter


class OptionalSlashRouter(SimpleRouter):
    def __init__(self) -> None:
        super().__init__()
        self.trailing_slash = "/?"


# A UUID, hyphenated or not: anything else in an id's place is a plain 404.
UUID_PATTERN = "-?".join(f"[0-9a-fA-F]{{{n}}}" for n in (8, 4, 4, 4, 12))
