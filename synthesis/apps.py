"""App config for synthesis."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


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
        from .medium import shaping  # noqa: F401 (registers the skills and world components)
        from .scenes import components  # noqa: F401 (registers the older scenes' components)
        from .state.productions import hooks_register

        hooks_register()  # a production's turns get state passes, its prompts the state

        # The shipped platform skills, into the database whenever `migrate` (or a test
        # database's flush) has run.
        post_migrate.connect(_platform_skills_sync, sender=self)
        # SQLite's memory search triggers, made again if a migration's table copy lost them.
        post_migrate.connect(_memory_search_ensure, sender=self)


def _platform_skills_sync(**kwargs) -> None:
    from .skills import platform_skills_sync

    platform_skills_sync()


def _memory_search_ensure(using: str = "default", **kwargs) -> None:
    from .state.search import memory_search_ensure

    memory_search_ensure(using)
