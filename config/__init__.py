"""The LMiX project: settings, URLs, the ASGI and Celery applications, the commands that
run the product. It composes the apps; no app imports it."""

from .celery import app as celery_app

__all__ = ["celery_app"]
