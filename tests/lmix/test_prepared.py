import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from unittest import mock

import pytest
from django.db import DatabaseError, connection, connections
from django.db.models import F, Prefetch
from django.db.models.sql.compiler import SQLCompiler, SQLUpdateCompiler
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from authoring.models import Assistant, Membership, Persona
from lmix.models import LLMCall
from lmix.prepared import Param, Prepared, together
from tests.factories import AffiliationFactory, AssistantFactory, PersonaFactory
from tests.round_trips import round_trips

pytestmark = pytest.mark.django_db


def assistant_by_key() -> Prepared[Assistant]:
    return Prepared(
        lambda: Assistant.objects.select_related("persona", "model").filter(
            pk=Param(Assistant, "pk")
        )
    )


@contextmanager
def builds(compiler: type[SQLCompiler] = SQLCompiler) -> Iterator[mock.Mock]:
    """Counts the times this thread builds SQL (the compiler's `as_sql`), still building it.
    The patch is on the class, which every thread shares: the suite's worker and its
    sweeper build SQL of their own meanwhile, and that is not counted."""
    this_thread = threading.get_ident()
    build = compiler.as_sql
    counted = mock.Mock()

    def as_sql(self, *args, **kwargs):
        if threading.get_ident() == this_thread:
            counted(self, *args, **kwargs)
        return build(self, *args, **kwargs)

    with mock.patch.object(compiler, "as_sql", as_sql):
        yield counted


def test_a_read_builds_its_sql_once_then_only_binds_new_values():
    first, second = AssistantFactory(), AssistantFactory()
    read = assistant_by_key()
    with builds() as built:
        assert read.one(pk=first.pk) == first
        assert built.call_count == 1
        with CaptureQueriesContext(connection) as queries:
            found = read.one(pk=second.pk)
            assert found.persona.name == second.persona.name  # loaded with the row
            assert found.model == second.model
        assert built.call_count == 1
    assert found == second
    assert len(queries) == 1
    assert queries[0]["sql"].count("JOIN") == 2


def test_a_read_gives_what_the_orm_gives_ordering_values_and_prefetches_included():
    group = AffiliationFactory(name="The Guild")
    personas = [PersonaFactory(owner=group.owner, name=n) for n in ("Cleo", "Abe", "Bea")]
    for persona in personas[:2]:
        Membership.objects.create(persona=persona, affiliation=group, covert=persona.name == "Abe")
    other_owner = PersonaFactory(name="Dora").owner

    def orm(owner_id: int):
        return (
            Persona.objects.filter(owner_id=owner_id)
            .order_by("name")
            .prefetch_related(Prefetch("memberships", Membership.objects.filter(covert=False)))
        )

    read = Prepared(lambda: orm(Param(Persona, "owner")))
    names = Prepared(
        lambda: Persona.objects.filter(owner=Param(Persona, "owner")).values_list("name", "pk")
    )
    for owner_id in (group.owner_id, other_owner.pk, other_owner.pk + 1000):
        expected = list(orm(owner_id))
        found = read.rows(owner=owner_id)
        assert found == expected
        assert [len(p.memberships.all()) for p in found] == [
            len(p.memberships.all()) for p in expected
        ]
        assert sorted(names.rows(owner=owner_id)) == sorted(
            Persona.objects.filter(owner_id=owner_id).values_list("name", "pk")
        )
    assert [p.name for p in read.rows(owner=group.owner_id)] == ["Abe", "Bea", "Cleo"]
    assert [len(p.memberships.all()) for p in read.rows(owner=group.owner_id)] == [0, 0, 1]


def test_one_is_none_when_nothing_matches_and_refuses_several_rows():
    persona = PersonaFactory()
    PersonaFactory(owner=persona.owner)
    assert assistant_by_key().one(pk=10**9) is None
    by_owner = Prepared(lambda: Persona.objects.filter(owner=Param(Persona, "owner")))
    with pytest.raises(ValueError, match="2 rows"):
        by_owner.one(owner=persona.owner_id)


def test_a_value_missing_from_a_call_is_named():
    with pytest.raises(TypeError, match="'pk'"):
        assistant_by_key().rows(primary_key=1)


def test_an_update_sets_the_values_of_each_call_on_the_rows_it_matches_only():
    calls = [LLMCall.objects.create(kind="complete", purpose="test") for _ in range(3)]
    finish = Prepared(
        lambda: LLMCall.objects.filter(pk=Param(LLMCall, "pk", name="call"), error="")
    )
    fields = ("error", "finished_at", "params")
    later = timezone.now() + timedelta(seconds=5)
    with builds(SQLUpdateCompiler) as built:
        for n, call in enumerate(calls[:2]):
            changed = finish.update(
                fields, call=call.pk, error="done", finished_at=later, params={"n": n, "ü": [1]}
            )
            assert changed == 1
        assert built.call_count == 1
        # The same fields again match nothing now: the WHERE is bound, not rebuilt.
        assert finish.update(fields, call=calls[0].pk, error="x", finished_at=None, params={}) == 0
    rows = {c.pk: c for c in LLMCall.objects.all()}
    assert [rows[c.pk].error for c in calls] == ["done", "done", ""]
    assert rows[calls[1].pk].params == {"n": 1, "ü": [1]}
    assert rows[calls[1].pk].finished_at == later
    assert rows[calls[2].pk].finished_at is None


@pytest.mark.django_db(transaction=True)
def test_threads_each_read_on_their_own_connection_with_their_own_values():
    assistants = [AssistantFactory() for _ in range(4)]
    read = assistant_by_key()
    read.one(pk=assistants[0].pk)  # built here, on this thread's connection
    found: dict[int, list[int]] = {}
    start = threading.Barrier(len(assistants))

    def reader(index: int) -> None:
        start.wait()
        try:
            found[index] = [read.one(pk=assistants[index].pk).pk for _ in range(20)]
        finally:
            connections.close_all()

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(len(assistants))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == {i: [a.pk] * 20 for i, a in enumerate(assistants)}


def test_an_update_takes_a_model_instance_for_its_key():
    first, second = AssistantFactory(), AssistantFactory()
    call = LLMCall.objects.create(kind="complete", purpose="test", llm_model=first.model)
    by_key = Prepared(lambda: LLMCall.objects.filter(pk=Param(LLMCall, "pk")))
    assert by_key.update(
        ("llm_model", "owner_id"), pk=call.pk, llm_model=second.model, owner_id=None
    )
    call.refresh_from_db()
    assert (call.llm_model, call.owner_id) == (second.model, None)


def by_name() -> Prepared:
    return Prepared(
        lambda: Assistant.objects.filter(name=Param(Assistant, "name")).values_list("pk", flat=True)
    )


# -- together: statements in one round trip --------------------------------------------------


def test_together_gives_each_statements_own_result_in_order_each_seeing_the_ones_before():
    first, second = AssistantFactory(name="first"), AssistantFactory(name="second")
    calls = [LLMCall.objects.create(kind="complete", purpose="test") for _ in range(2)]
    by_key = Prepared(lambda: LLMCall.objects.filter(pk=Param(LLMCall, "pk")))
    read = assistant_by_key()
    changed, nothing, found, read_back, names = together(
        by_key.updating(
            ("error",), fixed={"prompt_tokens": F("prompt_tokens") + 7}, pk=calls[0].pk, error="one"
        ),
        by_key.updating(("error",), pk=calls[1].pk + 1000, error="none"),
        read.read(pk=second.pk),
        by_key.read(pk=calls[0].pk),
        by_name().read(name="first"),
    )
    assert (changed, nothing) == (1, 0)
    assert found == [second] and found[0].persona.name == second.persona.name
    assert (read_back[0].error, read_back[0].prompt_tokens) == ("one", 7)  # after the update
    assert names == [first.pk]
    assert LLMCall.objects.get(pk=calls[1].pk).error == ""


def test_an_update_of_a_fixed_expression_is_built_once_and_counts_per_row():
    calls = [LLMCall.objects.create(kind="complete", purpose="test") for _ in range(2)]
    by_key = Prepared(lambda: LLMCall.objects.filter(pk=Param(LLMCall, "pk")))
    with builds(SQLUpdateCompiler) as built:
        for _ in range(2):
            for call in calls:
                (count,) = together(
                    by_key.updating(
                        ("error",),
                        fixed={"prompt_tokens": F("prompt_tokens") + 1},
                        pk=call.pk,
                        error="again",
                    )
                )
                assert count == 1
        assert built.call_count == 1
    assert [c.prompt_tokens for c in LLMCall.objects.filter(pk__in=[c.pk for c in calls])] == [2, 2]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a pipeline is PostgreSQL's")
def test_on_postgresql_together_waits_for_one_answer_where_one_by_one_waits_for_each():
    assistants = [AssistantFactory() for _ in range(4)]
    read = assistant_by_key()
    read.one(pk=assistants[0].pk)  # built and the connection open before counting
    with round_trips() as alone:
        expected = [read.rows(pk=a.pk) for a in assistants]
    with round_trips() as piped:
        assert together(*(read.read(pk=a.pk) for a in assistants)) == expected
    assert alone[0] >= 4  # one each, and one more to prepare a statement the second time
    assert piped == [1]


@pytest.mark.django_db(transaction=True)
def test_a_failing_statement_raises_and_stops_the_ones_after_it():
    call = LLMCall.objects.create(kind="complete", purpose="test")
    by_key = Prepared(lambda: LLMCall.objects.filter(pk=Param(LLMCall, "pk")))
    bad = Prepared(lambda: LLMCall.objects.filter(pk=Param(LLMCall, "pk")))
    with pytest.raises(DatabaseError):
        together(
            bad.updating(
                ("error",), fixed={"prompt_tokens": F("prompt_tokens") / 0}, pk=call.pk, error="x"
            ),
            by_key.updating(("error",), pk=call.pk, error="after"),
        )
    call.refresh_from_db()
    assert call.error == ""
    (count,) = together(by_key.updating(("error",), pk=call.pk, error="later"))  # usable again
    assert count == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="round trips to PostgreSQL")
def test_a_statements_preparation_is_not_counted_as_a_round_trip_of_its_own():
    """psycopg prepares a statement at its third run on a connection, in an exchange of its
    own; when that happens depends on what ran on the connection before, so
    `round_trips` leaves it out (tests/round_trips.py)."""
    counts = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT 0")  # the test's transaction begins
        for _ in range(4):
            with round_trips() as trips:
                cursor.execute("SELECT 'counted' || %s", ["once"])
            counts += trips
        with round_trips() as trips:
            cursor.execute("SELECT 1; SELECT 2")  # two statements, one round trip
    assert counts == [1, 1, 1, 1]
    assert trips == [1]
