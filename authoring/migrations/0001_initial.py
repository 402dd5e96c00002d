"""Worlds, scenarios, affiliations, personas, memberships, assistants and lore entries move
here from lmix/ (its 0008 forgets them): Django's state only, their tables keep their
names (`Meta.db_table`)."""

import django.db.models.deletion
import uuid
from django.conf import settings
from lmix.moved_models import content_types_moved
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('lmix', '0007_prompt_controls'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Affiliation',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('name', models.CharField(max_length=200)),
                        ('universal_truth', models.TextField(blank=True, default='', max_length=20000)),
                        ('internal_truth', models.TextField(blank=True, default='', max_length=20000)),
                        ('external_truth', models.TextField(blank=True, default='', max_length=20000)),
                        ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'lmix_affiliation',
                        'ordering': ['-created_at'],
                        'abstract': False,
                    },
                ),
                migrations.CreateModel(
                    name='Membership',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('covert', models.BooleanField(default=False)),
                        ('joined_at', models.DateTimeField(auto_now_add=True)),
                        ('affiliation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='authoring.affiliation')),
                    ],
                    options={
                        'db_table': 'lmix_membership',
                        'ordering': ['joined_at'],
                    },
                ),
                migrations.CreateModel(
                    name='Persona',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('name', models.CharField(max_length=200)),
                        ('universal_truth', models.TextField(blank=True, default='', max_length=20000)),
                        ('internal_truth', models.TextField(blank=True, default='', max_length=20000)),
                        ('external_truth', models.TextField(blank=True, default='', max_length=20000)),
                        ('known_as', models.CharField(blank=True, default='', max_length=200)),
                        ('avatar_url', models.URLField(blank=True, default='', max_length=2000)),
                        ('style', models.TextField(blank=True, default='', max_length=20000)),
                        ('greeting', models.TextField(blank=True, default='', max_length=20000)),
                        ('example_dialogue', models.TextField(blank=True, default='', max_length=20000)),
                        ('tags', models.JSONField(blank=True, default=list)),
                        ('affiliations', models.ManyToManyField(blank=True, related_name='members', through='authoring.Membership', to='authoring.affiliation')),
                        ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'lmix_persona',
                        'ordering': ['-created_at'],
                        'abstract': False,
                    },
                ),
                migrations.AddField(
                    model_name='membership',
                    name='persona',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='authoring.persona'),
                ),
                migrations.CreateModel(
                    name='Assistant',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('name', models.CharField(blank=True, default='', max_length=200)),
                        ('config_override', models.JSONField(blank=True, default=dict)),
                        ('system_prompt_template', models.TextField(blank=True, default='', max_length=20000)),
                        ('model', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='assistants', to='lmix.llmmodel')),
                        ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('persona', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='assistants', to='authoring.persona')),
                    ],
                    options={
                        'db_table': 'lmix_assistant',
                        'ordering': ['-created_at'],
                        'abstract': False,
                    },
                ),
                migrations.CreateModel(
                    name='Scenario',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('name', models.CharField(max_length=200)),
                        ('description', models.TextField(max_length=20000)),
                        ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'lmix_scenario',
                        'ordering': ['-created_at'],
                        'abstract': False,
                    },
                ),
                migrations.CreateModel(
                    name='World',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('name', models.CharField(max_length=200)),
                        ('description', models.TextField(max_length=20000)),
                        ('lore_scan_depth', models.PositiveSmallIntegerField(default=4)),
                        ('lore_budget', models.PositiveIntegerField(default=500)),
                        ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'lmix_world',
                        'ordering': ['-created_at'],
                        'abstract': False,
                    },
                ),
                migrations.CreateModel(
                    name='LoreEntry',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('keys', models.JSONField(default=list)),
                        ('content', models.TextField(max_length=20000)),
                        ('enabled', models.BooleanField(default=True)),
                        ('layer', models.CharField(choices=[('universal', 'Everyone'), ('affiliation', 'Members of one affiliation'), ('persona', 'One persona')], default='universal', max_length=16)),
                        ('priority', models.SmallIntegerField(default=0)),
                        ('affiliation', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='authoring.affiliation')),
                        ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('persona', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='authoring.persona')),
                        ('world', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='lore', to='authoring.world')),
                    ],
                    options={
                        'verbose_name': 'lore entry',
                        'verbose_name_plural': 'lore entries',
                        'db_table': 'lmix_loreentry',
                        'ordering': ['-priority', 'created_at'],
                        'abstract': False,
                    },
                ),
                migrations.AddConstraint(
                    model_name='membership',
                    constraint=models.UniqueConstraint(fields=('persona', 'affiliation'), name='unique_membership'),
                ),
                migrations.AddConstraint(
                    model_name='assistant',
                    constraint=models.UniqueConstraint(fields=('owner', 'persona', 'model'), name='one_assistant_per_persona_model'),
                ),
                migrations.AddConstraint(
                    model_name='loreentry',
                    constraint=models.CheckConstraint(condition=models.Q(models.Q(('affiliation__isnull', True), ('layer', 'universal'), ('persona__isnull', True)), models.Q(('affiliation__isnull', False), ('layer', 'affiliation'), ('persona__isnull', True)), models.Q(('affiliation__isnull', True), ('layer', 'persona'), ('persona__isnull', False)), _connector='OR'), name='lore_layer_matches_restriction'),
                ),
            ],
        ),
        content_types_moved(
            "lmix",
            "authoring",
            ["world", "scenario", "affiliation", "persona", "membership", "assistant", "loreentry"],
        ),
    ]
