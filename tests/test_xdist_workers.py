"""pytest-xdist workers on Redis databases of their own (tests/xdist_workers.py)."""

from tests.xdist_workers import redis_url_for


def test_worker_n_takes_the_configured_redis_database_plus_four_n():
    assert redis_url_for("redis://127.0.0.1:6379/10", 0) == "redis://127.0.0.1:6379/10"
    assert redis_url_for("redis://127.0.0.1:6379/10", 1) == "redis://127.0.0.1:6379/14"
    assert redis_url_for("redis://127.0.0.1:6379", 1) == "redis://127.0.0.1:6379/4"
    assert redis_url_for("redis://:pw@redis:6379/14", 1) == "redis://:pw@redis:6379/2"
