"""Seats' relations now point at the authoring app's models (the same tables)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('authoring', '0001_initial'),
        ('synthesis', '0007_frames_from_productions'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='seat',
                    name='assistant',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='authoring.assistant'),
                ),
                migrations.AlterField(
                    model_name='seat',
                    name='persona',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='authoring.persona'),
                ),
            ],
        ),
    ]
