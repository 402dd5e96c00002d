"""App config for the authoring data: models, worlds, scenarios, groups, personas, assistants."""

from django.apps import AppConfig


class LmixConfig(AppConfig):
    name = "lmix"
    verbose_name = "Authoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the new-user offline narrator)
