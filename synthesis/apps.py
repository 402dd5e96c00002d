"""App config for synthesis."""

from django.apps import AppConfig


class SynthesisConfig(AppConfig):
    name = "synthesis"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import (  # noqa: F401
            signals,  # closes deleted frames' sockets, frees a deleted account's seats
            state,  # registers the character state's prompt components
            tasks,  # registers its Celery tasks, which enqueue.py sends work to by name
            usage,  # names the frames that use an authoring object
        )
