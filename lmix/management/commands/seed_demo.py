"""`manage.py seed_demo`: load the demo data (idempotent) and print the logins."""

from django.core.management.base import BaseCommand

from lmix.demo import demo_seed


class Command(BaseCommand):
    help = "Load the demo world, scenario, affiliations, personas, assistants and users."

    def handle(self, *args, **options) -> None:
        logins = demo_seed()
        self.stdout.write(self.style.SUCCESS("Demo data ready."))
        for username, password in logins:
            self.stdout.write(f"  login: {username} / {password}")
