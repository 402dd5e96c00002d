"""`manage.py backup`: the whole instance, or one user's data, as a versioned archive."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from config.archive import BackupError
from config.backup import backup_write


class Command(BaseCommand):
    help = (
        "Write a backup archive (zip) of the whole instance, or of one user's data "
        "(--user). It is as sensitive as the database: password hashes, and in an instance "
        "archive the encrypted API keys. See docs/backups.md."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--user", metavar="USERNAME", help="only this account and its data")
        parser.add_argument("--output", metavar="PATH", help="the archive to write")

    def handle(self, *args, user: str | None, output: str | None, **options) -> None:
        if output is None:
            stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
            output = f"lmix-{'user-' + user if user else 'instance'}-{stamp}.zip"
        try:
            manifest = backup_write(path=Path(output), username=user)
        except BackupError as error:
            raise CommandError(str(error)) from error
        rows = sum(manifest["counts"].values())
        self.stdout.write(
            self.style.SUCCESS(
                f"Wrote {output}: {rows} rows of {len(manifest['counts'])} models, "
                f"{len(manifest['media'])} uploaded files ({manifest['scope']})."
            )
        )
        for name in manifest["media_missing"]:
            self.stderr.write(f"  missing upload, not archived: {name}")
