"""tests/round_trips.py counts waits for the server, however its answers interleave."""

from tests.round_trips import counted_in

STATEMENT = ["F\t525\tParse\t...", "F\t22\tBind\t...", "F\t6\tDescribe\tP", "F\t9\tExecute\t0"]
ANSWER = [
    "B\t4\tParseComplete",
    "B\t4\tBindComplete",
    "B\t9\tRowDescription",
    "B\t13\tCommandComplete",
]
READY = ["B\t5\tReadyForQuery\tI"]


def test_a_pipeline_is_one_round_trip_even_when_its_answers_arrive_before_its_sync():
    """As traced on a busy host: libpq flushed the pipeline's statements before its Sync,
    and psycopg read the first answers while sending the rest."""
    interleaved = [*STATEMENT, *STATEMENT, *ANSWER, *STATEMENT, "F\t4\tSync", *ANSWER, *ANSWER]
    assert counted_in([*interleaved, *READY]) == 1


def test_each_sync_or_simple_query_is_a_round_trip_of_its_own():
    one_by_one = [*STATEMENT, "F\t4\tSync", *ANSWER, *READY] * 3
    simple = ['F\t30\tQuery\t"SELECT 1; SELECT 2"', *ANSWER, *ANSWER, *READY]
    assert counted_in(one_by_one) == 3
    assert counted_in(one_by_one + simple) == 4


def test_the_statement_caches_upkeep_is_not_counted():
    prepare = ['F\t40\tParse\t"_pg3_1"', "F\t4\tSync", "B\t4\tParseComplete", *READY]
    close = ['F\t12\tClose\tS "_pg3_0"', "F\t4\tSync", "B\t4\tCloseComplete", *READY]
    one = [*STATEMENT, "F\t4\tSync", *ANSWER, *READY]
    assert counted_in(prepare + close + one) == 1
