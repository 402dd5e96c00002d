"""Moving models between apps without touching their tables: the migrations' helpers.

A model that moves keeps its table (`Meta.db_table`); the apps' migrations change only
Django's state (`SeparateDatabaseAndState`), and its content type follows it so that
admin permissions and logs stay attached.
"""

from django.db import migrations


def content_types_moved(source: str, target: str, models: list[str]) -> migrations.RunPython:
    """A migration step giving `models`' content types from app `source` to `target`."""

    def move(from_app: str, to_app: str):
        def run(apps, schema_editor) -> None:
            content_type = apps.get_model("contenttypes", "ContentType")
            for model in models:
                stale = content_type.objects.filter(app_label=to_app, model=model)
                if content_type.objects.filter(app_label=from_app, model=model).exists():
                    stale.delete()  # made by a migrate run before this one: the old one wins
                content_type.objects.filter(app_label=from_app, model=model).update(
                    app_label=to_app
                )

        return run

    return migrations.RunPython(move(source, target), move(target, source))
