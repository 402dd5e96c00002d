"""App config for the authoring data: models, worlds, scenarios, groups, personas, assistants."""

from django.apps import AppConfig


class LmixConfig(AppConfig):
    name = "lmix"
    verbose_name = "Authoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import (  # noqa: F401
            checks,  # registers the throttle-rate and unreadable-key checks
            schema,  # describes our session authentication to the OpenAPI schema
            signals,  # connects the new-user offline narrator
        )
        from .llm import network_policy  # noqa: F401  (registers its settings check)
