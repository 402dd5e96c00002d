"""Round trips to PostgreSQL, counted from libpq's own trace of the protocol."""

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

# psycopg prepares a statement at its third run on a connection (prepare_threshold 2) in an
# exchange of its own: Parse, then the statement's own. It happens once in a connection's
# life, but when depends on what earlier tests ran on it, so it is not counted.
PREPARING = ({"Parse", "Sync"}, {"ParseComplete", "ReadyForQuery"})


@contextmanager
def round_trips() -> Iterator[list[int]]:
    """Counts the round trips to PostgreSQL in the block, from libpq's own trace of the
    protocol: each time the server answers what the client sent since its last answer
    (but a statement's preparation, `PREPARING`)."""
    from psycopg import pq

    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    counted: list[int] = []
    with tempfile.TemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            yield counted
        finally:
            pgconn.untrace()
        trace.seek(0)
        messages = [line.split("\t") for line in trace if line[:1] in ("F", "B")]
    exchanges = _exchanges(messages)
    counted.append(sum(1 for exchange in exchanges if exchange != PREPARING))


def _exchanges(messages: list[list[str]]) -> list[tuple[set[str], set[str]]]:
    """The trace as exchanges: what the client sent, then what the server answered."""
    exchanges: list[tuple[set[str], set[str]]] = []
    for side, _length, kind, *_ in messages:
        kind = kind.strip()
        if side == "F" and (not exchanges or exchanges[-1][1]):
            exchanges.append((set(), set()))
        if exchanges:
            exchanges[-1][0 if side == "F" else 1].add(kind)
    return [(sent, answered) for sent, answered in exchanges if answered]
