"""`make test-django-next`: the Python suite on SQLite under Django's next pre-release (alpha,
beta or release candidate), when PyPI has one newer than the Django in uv.lock.

lmix/prepared.py leans on Django's private SQL compiler; this is how a change there shows
before the release that makes it. With no such pre-release it says so and exits 0 after one
look-up (a few seconds), so CI may run it every time. The look-up is pip's, run on the
project's Python: a release that needs a newer Python is not offered, as it could not be
installed. When PyPI cannot be asked it says so and exits 0 too (nothing to test against).

    python .ci/django_next.py                   # ask PyPI
    python .ci/django_next.py --django 5.2rc1   # this version, without asking
    python .ci/django_next.py -- tests/lmix     # pytest's arguments after `--`
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parent.parent
# The Makefile's uv venv (`make`'s $(UV)), which has pip too.
TOOLS = Path(os.environ.get("LMIX_UV_BIN", ROOT / ".uv" / "bin"))
UV, PIP = TOOLS / "uv", TOOLS / "pip"


def locked_django() -> Version:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    return Version(next(p["version"] for p in lock["package"] if p["name"] == "django"))


def published_djangos() -> list[Version] | None:
    """Every Django PyPI offers for this Python, pre-releases included; None if it cannot
    be asked."""
    command = [str(PIP), "index", "versions", "django", "--pre", "--timeout", "15"]
    try:
        answer = subprocess.run(command, capture_output=True, text=True, timeout=90, check=True)
    except (OSError, subprocess.SubprocessError) as error:
        print(f"django-next: could not ask PyPI for Django's versions ({error}).")
        return None
    listed = re.search(r"^Available versions: (.+)$", answer.stdout, re.MULTILINE)
    if listed is None:
        print("django-next: pip listed no Django versions.")
        return None
    versions = []
    for text in listed.group(1).split(","):
        try:
            versions.append(Version(text.strip()))
        except InvalidVersion:
            continue
    return versions


def next_prerelease(locked: Version, published: list[Version]) -> Version | None:
    """The newest Django published, if it is a pre-release newer than `locked`."""
    newest = max(published, default=None)
    return newest if newest is not None and newest.is_prerelease and newest > locked else None


def run_suite(django: Version, pytest_args: list[str]) -> int:
    """The suite, in a throwaway venv of the locked dependencies with `django` instead."""
    with tempfile.TemporaryDirectory(prefix="lmix-django-next-") as scratch:
        venv, requirements, overrides = (Path(scratch) / n for n in ("venv", "req.txt", "ovr.txt"))
        subprocess.run(
            [
                UV,
                "export",
                "--frozen",
                "--no-hashes",
                "--no-emit-project",
                "-q",
                "-o",
                requirements,
            ],
            cwd=ROOT,
            check=True,
        )
        overrides.write_text(f"django=={django}\n")
        subprocess.run([UV, "venv", "-q", "--python", sys.executable, venv], check=True)
        python = venv / "bin" / "python"
        subprocess.run(
            [UV, "pip", "install", "-q", "--python", python, "-r", requirements]
            + ["--overrides", overrides],
            check=True,
        )
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "VIRTUAL_ENV"}
        }
        args = pytest_args or ["-q", "-m", "not real_model"]
        print(f"django-next: the suite on Django {django} (SQLite): pytest {' '.join(args)}")
        return subprocess.run(
            [python, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=ROOT, env=env
        ).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--django", type=Version, help="run on this version; PyPI is not asked")
    parser.add_argument("pytest_args", nargs="*", help="pytest's arguments (after --)")
    options = parser.parse_args()
    locked = locked_django()
    django = options.django
    if django is None:
        published = published_djangos()
        if published is None:
            print("django-next: nothing run.")
            return 0
        django = next_prerelease(locked, published)
        if django is None:
            newest = max(published, default=None)
            print(
                f"django-next: no Django pre-release newer than the locked {locked} "
                f"(the newest published for this Python: {newest}); nothing to run."
            )
            return 0
    return run_suite(django, options.pytest_args)


if __name__ == "__main__":
    sys.exit(main())
