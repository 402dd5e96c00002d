"""A scratch database for benchmarks, never the configured one: SQLite in a temporary data
folder, or, when DATABASE_URL names PostgreSQL, a fresh `<name>_bench` database beside it.
Call before `django.setup()`."""

import os
import tempfile
from urllib.parse import urlsplit, urlunsplit


def scratch_database() -> None:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        # A configured LMIX_DATA_DIR holds someone's real SQLite database: never that one.
        os.environ["LMIX_DATA_DIR"] = tempfile.mkdtemp(prefix="lmix-bench-")
        return
    os.environ.setdefault("LMIX_DATA_DIR", tempfile.mkdtemp(prefix="lmix-bench-"))
    import psycopg

    url = urlsplit(os.environ["DATABASE_URL"])
    name = f"{url.path.strip('/') or 'lmix'}_bench"
    admin = urlunsplit(url._replace(scheme="postgresql", path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = urlunsplit(url._replace(path=f"/{name}"))
