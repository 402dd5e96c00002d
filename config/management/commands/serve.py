"""`manage.py serve`: daphne on HOST:PORT, plus an in-process Celery worker in embedded mode."""

import asyncio
import os
from contextlib import ExitStack

from daphne.endpoints import build_endpoint_description_strings
from daphne.server import Server
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.urls import get_resolver

from authoring.demo import DEMO_ADMIN, DEMO_USERS
from lmix.heap import collector, freeze_startup_objects
from lmix.realtime.sweeper import start_sweeper, stop_sweeper
from lmix.realtime.transport import limit_websockets, server_limits


class ListeningServer(Server):
    """daphne's server, remembering why it could not listen (daphne logs it, stops, and
    returns as from a clean stop)."""

    listen_failure = ""

    def listen_error(self, failure) -> None:
        self.listen_failure = failure.getErrorMessage()
        super().listen_error(failure)


class Command(BaseCommand):
    help = "Serve the SPA, API, admin and websockets (and the worker, in embedded mode)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument(
            "--worker",
            choices=["auto", "yes", "no"],
            default="auto",
            help="Run a Celery worker in this process (auto: only on the in-memory broker).",
        )
        parser.add_argument(
            "--setup",
            action="store_true",
            help="Migrate and load the demo data first (one process start instead of three).",
        )
        parser.add_argument("--quiet", action="store_true", help="Do not print the banner.")

    def handle(
        self, *args, host: str, port: int, worker: str, setup: bool, quiet: bool, **options
    ) -> None:
        from config.asgi import application

        if setup:
            call_command("migrate", interactive=False, verbosity=0)
            call_command("seed_demo", stdout=self.stdout)

        embedded = settings.CELERY_BROKER_URL.startswith("memory://")
        run_worker = worker == "yes" or (worker == "auto" and embedded)
        with ExitStack() as stack:
            if run_worker:
                from config.embedded_worker import embedded_worker

                stack.enter_context(embedded_worker())
            # Every process sweeps, so lost work is found even with no beat (docs/tasks.md).
            start_sweeper()
            stack.callback(stop_sweeper)
            if not quiet:
                self._banner(host, port, run_worker)
            _ = get_resolver().url_patterns  # the URLs load now, to be frozen with the rest
            freeze_startup_objects()
            stack.callback(collector.stop)

            def ready() -> None:  # daphne's loop is the current one; it runs next
                collector.start(asyncio.get_event_loop())
                limit_websockets(server)

            server = ListeningServer(
                application=application,
                endpoints=build_endpoint_description_strings(host=host, port=port),
                signal_handlers=True,
                verbosity=0,
                ready_callable=ready,
                **server_limits(),
            )
            server.run()
        if server.listen_failure:  # a supervisor restarts a process that failed, not one done
            raise CommandError(f"Could not listen on {host}:{port}: {server.listen_failure}")
        self.stdout.write("LMiX stopped.")

    def _banner(self, host: str, port: int, run_worker: bool) -> None:
        shown = "localhost" if host in {"127.0.0.1", "0.0.0.0", "::"} else host
        base = f"http://{shown}:{port}"
        database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        lines = [
            "",
            "LMiX is running.",
            f"  App:       {base}/",
            f"  Admin:     {base}/admin/",
            f"  API docs:  {base}/api/docs",
            f"  Database:  {database}; worker: {'in-process' if run_worker else 'external'}",
            "  Logins:    " + ", ".join(f"{u} / {p}" for u, p in [*DEMO_USERS, DEMO_ADMIN]),
            "  Stop with Ctrl-C.",
            "",
        ]
        self.stdout.write("\n".join(lines))
        self.stdout.flush()
