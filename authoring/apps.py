"""App config for authoring."""

from django.apps import AppConfig


class AuthoringConfig(AppConfig):
    name = "authoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (a deleted account's uploaded avatars go too)
