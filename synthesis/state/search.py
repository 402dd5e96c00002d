"""SQLite's text search over memories (embedded mode): an FTS5 table that triggers keep in
step with `synthesis_memory` (PostgreSQL needs none: a GIN index, migration 0018).

SQLite alters a table by copying it into a new one, which drops its triggers: any later
migration that alters `Memory` would silently stop the search's updates. So after every
`migrate` the triggers are checked, and made again (the table refilled) when missing."""

from django.db import connections

FTS = "synthesis_memory_fts"
TRIGGERS = {
    f"{FTS}_insert": "AFTER INSERT ON synthesis_memory BEGIN "
    f"INSERT INTO {FTS} (memory_id, text) VALUES (new.id, new.text); END",
    f"{FTS}_update": "AFTER UPDATE OF text ON synthesis_memory BEGIN "
    f"UPDATE {FTS} SET text = new.text WHERE memory_id = old.id; END",
    f"{FTS}_delete": "AFTER DELETE ON synthesis_memory BEGIN "
    f"DELETE FROM {FTS} WHERE memory_id = old.id; END",
}


def memory_search_ensure(using: str = "default") -> None:
    """Make the FTS5 table and its triggers if missing, refilled from the memories."""
    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master"
            " WHERE type = 'trigger' AND tbl_name = 'synthesis_memory'"
        )
        present = {row[0] for row in cursor.fetchall()}
        if set(TRIGGERS) <= present:
            return
        cursor.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS} USING fts5("
            "memory_id UNINDEXED, text, tokenize='porter unicode61')"
        )
        for name, body in TRIGGERS.items():
            cursor.execute(f"CREATE TRIGGER IF NOT EXISTS {name} {body}")
        cursor.execute(f"DELETE FROM {FTS}")
        cursor.execute(f"INSERT INTO {FTS} (memory_id, text) SELECT id, text FROM synthesis_memory")
