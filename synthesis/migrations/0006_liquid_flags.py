from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("synthesis", "0005_pass_tries"),
    ]

    operations = [
        migrations.AddField(
            model_name="liquid",
            name="flags",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
