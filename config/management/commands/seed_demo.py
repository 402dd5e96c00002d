"""`manage.py seed_demo`: load the demo data (idempotent) and print the logins."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from authoring.demo import DEMO_USERS, demo_seed
from productions.demo import demo_production_seed


class Command(BaseCommand):
    help = "Load the demo users, world, scenario, groups, personas, assistants and production."

    def handle(self, *args, **options) -> None:
        with transaction.atomic():
            logins = demo_seed()
            owner = get_user_model().objects.get(username=DEMO_USERS[0][0])
            demo_production_seed(owner=owner)
        self.stdout.write(self.style.SUCCESS("Demo data ready."))
        for username, password in logins:
            self.stdout.write(f"  login: {username} / {password}")
