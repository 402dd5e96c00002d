"""App config for productions and their turns."""

from django.apps import AppConfig


class ProductionsConfig(AppConfig):
    name = "productions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import (  # noqa: F401
            generation,  # registers the turns' lease heartbeat
            signals,  # deletes a deleted account's productions
            tasks,  # registers its Celery tasks, which enqueue.py sends work to by name
            usage,  # names the productions that use an authoring object
        )
