"""The hottest statements, whose SQL is built once per process, then only bound to new values.

Building a query's SQL costs more Python than PostgreSQL takes to answer it: the read of the
pass a commit wakes (nine tables) spent 1.7 of its 3.1 ms there, and building SQL was a
quarter of the worker's time under load (docs/benchmarks.md). The ORM has no such cache, so
this one keeps the compiler Django used for the first build and runs it again with the new
values in the same positions. It leans on the compiler's private interface (`as_sql`,
`execute_sql`, `select`, `klass_info`); tests/lmix/test_prepared.py pins what it relies on,
on SQLite and on PostgreSQL, and `make test-django-next` runs the suite on Django's next
pre-release (docs/testing.md).

So it is kept for the few statements of the per-commit, per-outcome and per-checkpoint
paths where it measurably pays, each behind a named function whose docstring says why:
`lmix/authentication.py::UserBackend.get_user`, `synthesis/medium/run.py::medium_pass_read`
and `_claim_and_read`, `synthesis/medium/context.py::_gather_reads` (with
`productions/selectors.py::seats_for_prompts_reads`) and
`synthesis/medium/flesh.py::narrative_checkpoint`. Everything else is plain ORM.

A query is written once, with a `Param` wherever a value changes from one call to the next;
everything else in it is fixed (its shape must not depend on the values):

    PASS_TO_RUN = Prepared(lambda: Pass.objects.filter(pk=Param(Pass, "pk"), status="pending"))
    pass_ = PASS_TO_RUN.one(pk=pass_id)

What Django checks while building (`select_for_update` outside a transaction, say) it checks
on the first call only; settings a query reads are read then too.

Statements that do not wait on each other's answers go to PostgreSQL together, in one round
trip (`together`): on this kind of host a round trip costs more than PostgreSQL's answer.
"""

import copy
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from django.db import connections, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models import Expression, Field, Model, QuerySet, prefetch_related_objects
from django.db.models.sql import UpdateQuery
from django.db.models.sql.compiler import SQLCompiler
from django.db.models.sql.constants import ROW_COUNT

M = TypeVar("M", bound=Model)


class Param(Expression):
    """A value given at each call, by name (the field's name unless `name` is given),
    converted for the database as `model`'s field `field` converts it."""

    for_save = False  # a value an UPDATE sets (Django says so when it resolves it)

    def __init__(self, model: type[Model], field: str, *, name: str = "") -> None:
        target: Field = model._meta.pk if field == "pk" else model._meta.get_field(field)
        super().__init__(output_field=target)
        self.name = name or field

    def resolve_expression(self, *args: Any, for_save: bool = False, **kwargs: Any) -> "Param":
        resolved = super().resolve_expression(*args, **kwargs)
        resolved.for_save = for_save
        return resolved

    def as_sql(self, compiler: SQLCompiler, connection: Any) -> tuple[str, list]:
        return "%s", [self]  # the placeholder stays in the params until a call binds it

    def bind(self, values: dict[str, Any], connection: Any) -> Any:
        try:
            value = values[self.name]
        except KeyError:
            raise TypeError(f"This query needs a value for {self.name!r}.") from None
        if self.for_save:
            if hasattr(value, "prepare_database_save"):  # a model instance: its key
                value = value.prepare_database_save(self.output_field)
            return self.output_field.get_db_prep_save(value, connection)
        return self.output_field.get_db_prep_value(value, connection, prepared=False)


class _Compiled:
    """One query's SQL for one database, and the compiler that built it: its columns and
    how they map onto models (what turning rows into objects reads)."""

    def __init__(self, compiler: SQLCompiler) -> None:
        self.compiler = compiler
        self.alias = compiler.using
        self.sql, params = compiler.as_sql()
        self.params = tuple(params)

    def bound(self, values: dict[str, Any]) -> SQLCompiler:
        """A copy of the compiler on this thread's connection that sends the SQL with
        `values` in place of its `Param`s, without building it again."""
        connection = connections[self.alias]
        params = [p.bind(values, connection) if isinstance(p, Param) else p for p in self.params]
        compiler = copy.copy(self.compiler)
        compiler.connection = connection
        sql = self.sql
        compiler.as_sql = lambda *args, **kwargs: (sql, params)  # type: ignore[method-assign]
        return compiler


class _Built:
    """What the row iterables ask of a query: its compiler, here already built."""

    def __init__(self, compiler: SQLCompiler) -> None:
        self.compiler = compiler

    def get_compiler(self, using: str | None = None, **kwargs: Any) -> SQLCompiler:
        return self.compiler


class Statement:
    """One bound statement, run alone (`run`) or sent with others (`together`); `finish`
    turns its cursor, once answered, into its result."""

    def __init__(self, compiler: SQLCompiler, finish: Callable[[CursorWrapper], Any]) -> None:
        self.alias = compiler.using
        self.sql, self.params = compiler.as_sql()
        self.finish = finish

    def run(self) -> Any:
        with connections[self.alias].cursor() as cursor:
            cursor.execute(self.sql, self.params)
            return self.finish(cursor)


def together(*statements: Statement) -> list[Any]:
    """The statements' results, in order. On PostgreSQL they are sent in one pipeline: one
    round trip for all, each statement still run on its own and in order, as if sent one
    after another (a failure aborts the ones after it and raises here); elsewhere they are
    simply run one after another."""
    alias = statements[0].alias
    connection = connections[alias]
    with transaction.mark_for_rollback_on_error(using=alias):
        if connection.vendor != "postgresql":
            return [statement.run() for statement in statements]
        cursors = [connection.cursor() for _ in statements]
        try:
            with connection.wrap_database_errors, connection.connection.pipeline():
                for cursor, statement in zip(cursors, statements, strict=True):
                    cursor.execute(statement.sql, statement.params)
            return [s.finish(c) for s, c in zip(statements, cursors, strict=True)]
        finally:
            for cursor in cursors:
                cursor.close()


class Prepared(Generic[M]):
    """A read (`rows`, `one`) or an update (`update`) whose SQL `build` returns, with its
    `Param`s: built on first use in each process, then only bound. One database (LMiX has
    one). Thread-safe: two threads that build it at once build the same thing."""

    def __init__(self, build: Callable[[], QuerySet[M]]) -> None:
        self._build = build
        self._read: tuple[QuerySet[M], _Compiled] | None = None
        self._updates: dict[tuple[str, ...], _Compiled] = {}

    def rows(self, **values: Any) -> list[M]:
        """The query's rows (objects, or tuples for `values_list`), prefetches done."""
        return self._objects(self._bound(values))

    def read(self, **values: Any) -> Statement:
        """`rows(**values)` as a statement for `together`."""
        compiler = self._bound(values)
        return Statement(compiler, lambda cursor: self._objects(compiler, cursor.fetchall()))

    def _bound(self, values: dict[str, Any]) -> SQLCompiler:
        if self._read is None:
            prototype = self._build()
            self._read = (prototype, _Compiled(prototype.query.get_compiler(prototype.db)))
        return self._read[1].bound(values)

    def _objects(self, compiler: SQLCompiler, fetched: list[tuple] | None = None) -> list[M]:
        """Rows as the ORM makes them: of the compiler's own query, or of rows `fetched`
        already by its SQL."""
        if fetched is not None:
            if compiler.has_extra_select:  # as `execute_sql` trims them
                fetched = [row[: compiler.col_count] for row in fetched]
            compiler.execute_sql = lambda *args, **kwargs: [fetched]  # type: ignore[method-assign]
        prototype = self._read[0]
        queryset = QuerySet(model=prototype.model, query=_Built(compiler))
        queryset._db = compiler.using
        queryset._iterable_class = prototype._iterable_class
        queryset._fields = prototype._fields
        rows = list(queryset._iterable_class(queryset))
        if prototype._prefetch_related_lookups:
            prefetch_related_objects(rows, *prototype._prefetch_related_lookups)
        return rows

    @property
    def limit(self) -> int | None:
        """The most rows the read gives (its slice), as it was built; None before."""
        return self._read[0].query.high_mark if self._read else None

    def one(self, **values: Any) -> M | None:
        """The one row of a read by a unique key, or None."""
        rows = self.rows(**values)
        if len(rows) > 1:
            raise ValueError(f"{len(rows)} rows where at most one was expected.")
        return rows[0] if rows else None

    def update(self, fields: tuple[str, ...], **values: Any) -> int:
        """UPDATE the query's rows, setting each of `fields` to the value of that name (a
        `Param` each: one build for each tuple of fields). Returns how many rows matched."""
        compiler = self._update_bound(fields, {}, values)
        with transaction.mark_for_rollback_on_error(using=compiler.using):
            return compiler.execute_sql(ROW_COUNT)

    def updating(
        self, fields: tuple[str, ...], *, fixed: dict[str, Expression] | None = None, **values: Any
    ) -> Statement:
        """`update` as a statement for `together`; `fixed` sets fields to expressions of
        the row itself (`F("attempts") + 1`), the same at every call."""
        compiler = self._update_bound(fields, fixed or {}, values)
        return Statement(compiler, lambda cursor: cursor.rowcount)

    def _update_bound(
        self, fields: tuple[str, ...], fixed: dict[str, Expression], values: dict[str, Any]
    ) -> SQLCompiler:
        key = (*fields, *(f"={name}" for name in fixed))
        compiled = self._updates.get(key)
        if compiled is None:
            queryset = self._build()
            query = queryset.query.chain(UpdateQuery)
            query.add_update_values({f: Param(queryset.model, f) for f in fields} | fixed)
            compiled = self._updates[key] = _Compiled(query.get_compiler(queryset.db))
        return compiled.bound(values)
