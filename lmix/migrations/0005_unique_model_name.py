"""Models are told apart by name, no longer by endpoint and model id."""

from django.db import migrations, models


def rename_duplicates(apps, schema_editor):
    """Give every model a name its owner uses once ("Name (2)", ...), so the rule can hold."""
    LLMModel = apps.get_model("lmix", "LLMModel")
    taken: dict[object, set[str]] = {}
    for model in LLMModel.objects.order_by("created_at", "pk"):
        names = taken.setdefault(model.owner_id, set())
        name, n = model.name, 1
        while name in names:
            n += 1
            name = f"{model.name[:190]} ({n})"
        if name != model.name:
            model.name = name
            model.save(update_fields=["name"])
        names.add(name)


class Migration(migrations.Migration):
    dependencies = [
        ("lmix", "0004_covert_memberships_known_as"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="llmmodel", name="unique_model_per_endpoint"),
        migrations.RunPython(rename_duplicates, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="llmmodel",
            constraint=models.UniqueConstraint(fields=("owner", "name"), name="unique_model_name"),
        ),
    ]
