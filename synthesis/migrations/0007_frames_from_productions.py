"""Frames, seats and bans move here from productions/ (its 0007 forgets them): Django's
state only, their tables keep their names (`Meta.db_table`)."""

import django.db.models.deletion
import synthesis.models
import uuid
from django.conf import settings
from django.db import migrations, models

from lmix.moved_models import content_types_moved


class Migration(migrations.Migration):

    dependencies = [
        ('lmix', '0007_prompt_controls'),
        ('productions', '0006_frame_bans'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('synthesis', '0006_liquid_flags'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Frame',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('name', models.CharField(max_length=200)),
                        ('status', models.CharField(choices=[('open', 'Open'), ('paused', 'Paused'), ('closed', 'Closed')], default='open', max_length=16)),
                        ('mode', models.CharField(choices=[('per_character', 'Per Character'), ('shared', 'Shared')], default='per_character', max_length=16)),
                        ('tempo', models.FloatField(default=1.0)),
                        ('liquid_visibility', models.CharField(choices=[('all', 'All'), ('own', 'Own'), ('gm', 'Gm')], default='all', max_length=8)),
                        ('invite_code', models.CharField(default=synthesis.models.new_invite_code, max_length=32, unique=True)),
                        ('spectator_code', models.CharField(blank=True, max_length=32, null=True, unique=True)),
                        ('seq', models.BigIntegerField(default=0)),
                        ('medium_model', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='lmix.llmmodel')),
                        ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('production', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='frames', to='productions.production')),
                        ('soft_model', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='lmix.llmmodel')),
                    ],
                    options={
                        'db_table': 'productions_frame',
                        'ordering': ['-created_at'],
                        'abstract': False,
                    },
                ),
                migrations.AlterField(
                    model_name='liquid',
                    name='frame',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='liquid', to='synthesis.frame'),
                ),
                migrations.AlterField(
                    model_name='narrative',
                    name='frame',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='narratives', to='synthesis.frame'),
                ),
                migrations.AlterField(
                    model_name='outcome',
                    name='frame',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='outcomes', to='synthesis.frame'),
                ),
                migrations.AlterField(
                    model_name='pass',
                    name='frame',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='passes', to='synthesis.frame'),
                ),
                migrations.AlterField(
                    model_name='tabletalk',
                    name='frame',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='table_talk', to='synthesis.frame'),
                ),
                migrations.AlterField(
                    model_name='window',
                    name='frame',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='windows', to='synthesis.frame'),
                ),
                migrations.CreateModel(
                    name='Seat',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('position', models.PositiveSmallIntegerField(default=0)),
                        ('controller', models.CharField(choices=[('open', 'Open'), ('human', 'Human'), ('ai', 'Ai')], default='open', max_length=8)),
                        ('assistant', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='lmix.assistant')),
                        ('frame', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='seats', to='synthesis.frame')),
                        ('persona', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='lmix.persona')),
                        ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'productions_seat',
                        'ordering': ['position', 'id'],
                    },
                ),
                migrations.AlterField(
                    model_name='liquid',
                    name='seat',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='liquid', to='synthesis.seat'),
                ),
                migrations.AlterField(
                    model_name='narrative',
                    name='seat',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='narratives', to='synthesis.seat'),
                ),
                migrations.AlterField(
                    model_name='outcome',
                    name='seat',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='outcomes', to='synthesis.seat'),
                ),
                migrations.AlterField(
                    model_name='pass',
                    name='seat',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='passes', to='synthesis.seat'),
                ),
                migrations.AlterField(
                    model_name='tabletalk',
                    name='seat',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to='synthesis.seat'),
                ),
                migrations.AlterField(
                    model_name='window',
                    name='seat',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='windows', to='synthesis.seat'),
                ),
                migrations.CreateModel(
                    name='FrameBan',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('frame', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='bans', to='synthesis.frame')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'productions_frameban',
                        'ordering': ['created_at', 'id'],
                        'constraints': [models.UniqueConstraint(fields=('frame', 'user'), name='one_ban_per_frame_user')],
                    },
                ),
                migrations.AddConstraint(
                    model_name='seat',
                    constraint=models.UniqueConstraint(fields=('frame', 'persona'), name='one_seat_per_persona'),
                ),
                migrations.AddConstraint(
                    model_name='seat',
                    constraint=models.UniqueConstraint(condition=models.Q(('user__isnull', False)), fields=('frame', 'user'), name='one_seat_per_user'),
                ),
                migrations.AddConstraint(
                    model_name='seat',
                    constraint=models.CheckConstraint(condition=models.Q(models.Q(('assistant__isnull', True), ('controller', 'open'), ('user__isnull', True)), models.Q(('assistant__isnull', True), ('controller', 'human'), ('user__isnull', False)), models.Q(('assistant__isnull', False), ('controller', 'ai'), ('user__isnull', True)), _connector='OR'), name='seat_controller_matches_player'),
                ),
            ],
        ),
        content_types_moved("productions", "synthesis", ["frame", "seat", "frameban"]),
    ]
