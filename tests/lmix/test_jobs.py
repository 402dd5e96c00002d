"""The job registry (lmix/realtime/leases.py): every task is a job or says why not, and
docs/tasks.md's table is the registry's."""

import re
from pathlib import Path

from celery import current_app

from lmix.realtime.leases import jobs, jobs_table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tasks.md"

# Tasks that are not jobs, and why (docs/tasks.md says the same).
NOT_JOBS = {
    "synthesis.tasks.window_fire_task": "a timer: its window is claimed by a conditional update",
    "synthesis.tasks.scene_check_task": "a check that changes nothing when it finds nothing",
    "synthesis.tasks.frames_snapshot_task": "beat's, on a schedule",
    "synthesis.tasks.frames_sweep_task": "a sweep",
    "lmix.tasks.jobs_sweep_task": "the sweep",
    "productions.tasks.draft_generate_task": "its user sees it fail and asks again",
}


def test_every_task_of_the_apps_is_a_job_or_says_why_not():
    current_app.loader.import_default_modules()
    ours = {
        name
        for name in current_app.tasks
        if name.split(".")[0] in {"lmix", "synthesis", "productions"}
    }
    runs = {work.task for work in jobs()} | {h.task for work in jobs() for h in work.handovers}
    assert ours - runs <= set(NOT_JOBS), "register the new task's work with `leased`"
    assert not runs & set(NOT_JOBS)


def test_the_table_of_jobs_in_the_docs_is_the_registrys():
    current_app.loader.import_default_modules()
    text = DOCS.read_text()
    shown = re.search(r"<!-- jobs:begin -->\n(.*)\n<!-- jobs:end -->", text, re.S)
    assert shown, "docs/tasks.md lost its jobs markers"
    assert shown.group(1) == jobs_table(), "run `manage.py jobs` and paste it into docs/tasks.md"
