"""The project itself as an app, for its commands (`serve`, `seed_demo`)."""

from django.apps import AppConfig


class ProjectConfig(AppConfig):
    name = "config"
    label = "config"
