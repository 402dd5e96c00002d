"""Text search over memories for recall (synthesis/state/selectors.py::recall), per
database: on PostgreSQL a GIN index on the very expression `recall` matches against; on
SQLite (embedded mode) an FTS5 table that triggers keep in step with the memories. The GM's
memory edits are audited (`MemoryEdit`) and a removed memory is kept, hidden (`removed`)."""

import uuid

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

PG_UP = (
    "CREATE INDEX memory_text_search ON synthesis_memory "
    "USING GIN (to_tsvector('english'::regconfig, COALESCE(text, '')))"
)
PG_DOWN = "DROP INDEX IF EXISTS memory_text_search"
SQLITE_UP = [
    "CREATE VIRTUAL TABLE synthesis_memory_fts USING fts5("
    "memory_id UNINDEXED, text, tokenize='porter unicode61')",
    "CREATE TRIGGER synthesis_memory_fts_insert AFTER INSERT ON synthesis_memory BEGIN "
    "INSERT INTO synthesis_memory_fts (memory_id, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER synthesis_memory_fts_update AFTER UPDATE OF text ON synthesis_memory BEGIN "
    "UPDATE synthesis_memory_fts SET text = new.text WHERE memory_id = old.id; END",
    "CREATE TRIGGER synthesis_memory_fts_delete AFTER DELETE ON synthesis_memory BEGIN "
    "DELETE FROM synthesis_memory_fts WHERE memory_id = old.id; END",
    "INSERT INTO synthesis_memory_fts (memory_id, text) SELECT id, text FROM synthesis_memory",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS synthesis_memory_fts_insert",
    "DROP TRIGGER IF EXISTS synthesis_memory_fts_update",
    "DROP TRIGGER IF EXISTS synthesis_memory_fts_delete",
    "DROP TABLE IF EXISTS synthesis_memory_fts",
]


def _run(statements: dict):
    def run(apps, schema_editor):
        for sql in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):

    dependencies = [
        ('synthesis', '0017_outcome_hold'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='memory',
            name='removed',
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name='memory',
            name='scored',
            field=models.BooleanField(default=False),
        ),
        migrations.CreateModel(
            name='MemoryEdit',
            fields=[
                ('id', models.BigAutoField(primary_key=True, serialize=False)),
                ('change', models.JSONField(default=dict)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('memory', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='edits', to='synthesis.memory')),
            ],
            options={'ordering': ['id']},
        ),
        migrations.CreateModel(
            name='SignificancePass',
            fields=[
                ('outcome', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='significance_pass', serialize=False, to='synthesis.outcome')),
                ('status', models.CharField(choices=[('running', 'Running'), ('done', 'Done'), ('failed', 'Failed')], default='running', max_length=8)),
                ('tries', models.JSONField(blank=True, default=list)),
                ('error', models.TextField(blank=True, default='')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('frame', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='synthesis.frame')),
            ],
        ),
        migrations.RunPython(
            _run({"postgresql": [PG_UP], "sqlite": SQLITE_UP}),
            _run({"postgresql": [PG_DOWN], "sqlite": SQLITE_DOWN}),
        ),
    ]
