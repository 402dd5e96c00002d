"""Personas gain a greeting, example dialogue and tags (chat front-end authoring)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('lmix', '0005_unique_model_name'),
    ]

    operations = [
        migrations.AddField(
            model_name='persona',
            name='example_dialogue',
            field=models.TextField(blank=True, default='', max_length=20000),
        ),
        migrations.AddField(
            model_name='persona',
            name='greeting',
            field=models.TextField(blank=True, default='', max_length=20000),
        ),
        migrations.AddField(
            model_name='persona',
            name='tags',
            field=models.JSONField(blank=True, default=list),
        ),
    ]
