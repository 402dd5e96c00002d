"""What a long-running process sets up to keep its own cost small: PostgreSQL connections
borrowed from a pool, statements planned once, and the objects it started with frozen out
of full collections."""

import gc
import uuid

import pytest
from django.db import connection

from lmix.heap import freeze_startup_objects
from synthesis.models import Seat


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_closed_connection_goes_back_to_the_pool_and_is_reused():
    if connection.vendor != "postgresql":
        pytest.skip("the pool is PostgreSQL's (SQLite opens a file)")
    pids = set()
    for _ in range(20):
        pids.add(backend_pid())
        connection.close()  # what Django does after every request and task
    # Without the pool each of the twenty would have started a backend of its own.
    assert len(pids) <= connection.pool.get_stats()["pool_size"] < 20


@pytest.mark.django_db
def test_a_statement_a_connection_runs_again_and_again_is_prepared_and_planned_once():
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")

    # A query no other test makes: the pool's connection may have prepared theirs.
    marker = '("productions_seat"."controller" = $2 AND "productions_seat"."id" = $3) LIMIT 1'

    def prepared() -> list[str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            return [row[0] for row in cursor.fetchall() if marker in row[0]]

    assert prepared() == []
    for controller in ("open", "human", "ai", "open"):  # one statement, other values
        assert not Seat.objects.filter(pk=uuid.uuid4(), controller=controller).exists()
    assert len(prepared()) == 1


def test_freezing_moves_the_startup_objects_out_of_collections():
    try:
        freeze_startup_objects()
        assert gc.get_freeze_count() > 1000  # Django and this suite's modules, at least
    finally:
        gc.unfreeze()


def test_serve_fails_when_its_port_is_taken_so_a_supervisor_restarts_it():
    """daphne logs "Address already in use" and stops as from a clean stop; `serve` must
    exit non-zero, or a supervisor that restarts failed processes never restarts it."""
    import socket
    import subprocess
    import sys

    from tests.live_processes import ROOT, child_env

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "manage.py", "serve", "--quiet", "--worker", "no"]
        done = subprocess.run(
            [*command, "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=child_env(LMIX_SWEEPER="false"),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode != 0
    assert f"Could not listen on 127.0.0.1:{port}" in done.stderr
    assert "LMiX stopped." not in done.stdout
