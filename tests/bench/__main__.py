"""`make bench`: the knowledge compiler and the turn loop's own overhead, on a scratch database.

Runs on the configured database (SQLite in a temporary folder unless DATABASE_URL is set),
with the offline narrator unpaced, so what is measured is LMiX's work: compiling prompts,
storing and publishing every streamed delta.
"""

import os
import statistics
import tempfile
import time

os.environ.setdefault("LMIX_DATA_DIR", tempfile.mkdtemp(prefix="lmix-bench-"))
os.environ["LMIX_OFFLINE_STREAM_DELAY"] = "0"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lmix.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402


def timed(fn, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def report(label: str, samples: list[float], unit: float = 1e3, suffix: str = "ms") -> None:
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    print(
        f"{label:<44} median {statistics.median(samples) * unit:8.2f} {suffix}"
        f"   p95 {p95 * unit:8.2f} {suffix}   n={len(samples)}"
    )


def main() -> None:
    call_command("migrate", verbosity=0)
    from productions.knowledge import compile_knowledge
    from productions.models import Turn
    from productions.selectors import cast_load
    from productions.services import turn_generate, turn_request
    from tests.factories import UserFactory
    from tests.productions.conftest import make_production

    owner = UserFactory()
    production = make_production(owner)
    personas = [member.persona for member in cast_load(production=production)]

    def compile_all() -> None:
        for speaker in personas:
            compile_knowledge(
                speaker=speaker,
                cast=personas,
                world=production.world,
                scenario=production.scenario,
            )

    report("compile 3 prompts (cast of 3)", timed(compile_all, 2000), 1e6, "µs")

    durations, per_delta = [], []
    for _ in range(int(os.environ.get("BENCH_TURNS", "30"))):
        turn = turn_request(production=production)
        start = time.perf_counter()
        turn_generate(turn_id=turn.pk)
        elapsed = time.perf_counter() - start
        turn = Turn.objects.get(pk=turn.pk)
        durations.append(elapsed)
        per_delta.append(elapsed / max(turn.token_count, 1))
    report("generate one turn (offline, unpaced)", durations)
    report("overhead per streamed delta", per_delta)
    print(f"(database: {django.db.connection.vendor})")


if __name__ == "__main__":
    main()
