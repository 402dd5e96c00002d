"""The API router: `/api/models` and `/api/models/` both work."""

from rest_framework.routers import SimpleRouter


class OptionalSlashRouter(SimpleRouter):
    def __init__(self) -> None:
        super().__init__()
        self.trailing_slash = "/?"
