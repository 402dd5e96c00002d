"""`manage.py jobs`: every kind of background job, as docs/tasks.md's table."""

from celery import current_app
from django.core.management.base import BaseCommand

from lmix.realtime.leases import jobs_table


class Command(BaseCommand):
    help = "Print the job registry (lmix/realtime/leases.py) as a Markdown table."

    def handle(self, *args, **options) -> None:
        current_app.loader.import_default_modules()  # the apps' tasks register their jobs
        self.stdout.write(jobs_table())
