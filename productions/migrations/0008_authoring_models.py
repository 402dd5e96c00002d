"""Productions' relations now point at the authoring app's models (the same tables)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('authoring', '0001_initial'),
        ('productions', '0007_frames_moved_to_synthesis'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='castmember',
                    name='assistant',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='authoring.assistant'),
                ),
                migrations.AlterField(
                    model_name='production',
                    name='assistants',
                    field=models.ManyToManyField(related_name='productions', through='productions.CastMember', to='authoring.assistant'),
                ),
                migrations.AlterField(
                    model_name='production',
                    name='scenario',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='productions', to='authoring.scenario'),
                ),
                migrations.AlterField(
                    model_name='production',
                    name='world',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='productions', to='authoring.world'),
                ),
                migrations.AlterField(
                    model_name='turn',
                    name='assistant',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='turns', to='authoring.assistant'),
                ),
            ],
        ),
    ]
