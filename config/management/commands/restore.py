"""`manage.py restore`: load a backup archive, all or nothing."""

from pathlib import Path

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError

from config.archive import BackupError
from config.restore import restore


class Command(BaseCommand):
    help = (
        "Restore a backup archive made by `manage.py backup`: an instance archive into an "
        "empty database (or --replace), a per-user archive into this instance (as a new "
        "account, or --as-user). One transaction: nothing is left half done. "
        "See docs/backups.md."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", help="the archive")
        parser.add_argument(
            "--dry-run", action="store_true", help="check and say what would be created"
        )
        parser.add_argument(
            "--as-user", metavar="USERNAME", help="per-user archive: into this existing account"
        )
        parser.add_argument(
            "--replace",
            action="store_true",
            help="instance archive: delete everything in this database first",
        )
        parser.add_argument(
            "--noinput",
            "--no-input",
            action="store_false",
            dest="interactive",
            help="do not ask before --replace deletes",
        )

    def handle(self, *args, path: str, dry_run: bool, as_user, replace, interactive, **options):
        if replace and interactive and not dry_run:
            try:
                answer = input(
                    "--replace deletes every user and all their data in this database before "
                    "restoring. Type 'yes' to continue: "
                )
            except EOFError:
                raise CommandError("No answer to confirm --replace: pass --noinput.") from None
            if answer.strip() != "yes":
                raise CommandError("Restore cancelled.")
        try:
            result = restore(path=Path(path), dry_run=dry_run, as_user=as_user, replace=replace)
        except BackupError as error:
            raise CommandError(str(error)) from error
        verb = "Would create" if dry_run else "Restored"
        who = f" for the user “{result.username}”" if result.username else ""
        replaced = ", after deleting everything this database held" if result.replaced else ""
        self.stdout.write(self.style.SUCCESS(f"{verb} ({result.scope} archive{who}{replaced}):"))
        for key, count in result.counts.items():
            if count:
                meta = apps.get_model(key)._meta
                name = meta.verbose_name if count == 1 else meta.verbose_name_plural
                self.stdout.write(f"  {count} {name}")
        self.stdout.write(f"  {len(result.media)} uploaded files")
