"""`manage.py events_schema`: the socket events' JSON Schema on stdout (`make types`)."""

import json

from django.core.management.base import BaseCommand

from synthesis.event_types import events_json_schema


class Command(BaseCommand):
    help = "Print the JSON Schema of every websocket event."

    def handle(self, *args: object, **options: object) -> None:
        self.stdout.write(json.dumps(events_json_schema(), indent=2))
