"""App config for productions and their turns."""

from django.apps import AppConfig


class ProductionsConfig(AppConfig):
    name = "productions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import generation  # noqa: F401  (registers the turns' lease heartbeat)
