from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from annotation.imports.formats import labels_import_formatted
from annotation.imports.labels import LabelImportResult, labels_import
from projects.formats import FORMATS, NATIVE
from projects.imports.items import ImportRejected
from projects.management.commands.import_items import (
    add_reading_arguments,
    project_from_argument,
    reading_from_arguments,
)


class Command(BaseCommand):
    help = (
        "Import existing human labels (binary, Likert or IFS) from JSON Lines; see annotation/imports/labels.py for "
        "the row shape. Unknown annotators become members without a login; existing accounts are refused unless "
        "--allow-members / --allow-leads say otherwise. --format reads another tool's file."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug or id")
        parser.add_argument("file", type=Path)
        parser.add_argument("--skip-invalid", action="store_true", help="import the good rows, report the bad ones")
        parser.add_argument("--format", choices=FORMATS, default=NATIVE, help="the tool the file comes from")
        add_reading_arguments(parser)
        parser.add_argument(
            "--allow-members", action="store_true", help="rows may name annotators of this project who have a login"
        )
        parser.add_argument("--allow-leads", action="store_true", help="rows may name leads of this project")

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_from_argument(options["project"])
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file.")
        if options["format"] != NATIVE:
            with path.open("rb") as handle:
                try:
                    result = labels_import_formatted(
                        project=project,
                        fmt=options["format"],
                        reading=reading_from_arguments(options),
                        handle=handle,
                        skip_invalid=options["skip_invalid"],
                        allow_members=options["allow_members"],
                        allow_leads=options["allow_leads"],
                    )
                except ImportRejected as exc:
                    self._rejected(exc)
            self._report(result)
            return
        with path.open(encoding="utf-8") as text:
            total = sum(1 for _ in text)
        with path.open(encoding="utf-8") as text, tqdm(total=total, unit="row", desc="importing labels") as bar:

            def progress(done: int) -> None:
                bar.update(max(0, done - bar.n))

            try:
                result = labels_import(
                    project=project,
                    lines=text,
                    skip_invalid=options["skip_invalid"],
                    allow_members=options["allow_members"],
                    allow_leads=options["allow_leads"],
                    progress=progress,
                )
            except ImportRejected as exc:
                bar.close()
                self._rejected(exc)
            bar.update(total - bar.n)
        self._report(result)

    def _rejected(self, exc: ImportRejected) -> NoReturn:
        for error in exc.errors:
            self.stderr.write(str(error))
        raise CommandError(f"{exc.total_errors} bad row(s): nothing imported. Fix them or pass --skip-invalid.")

    def _report(self, result: LabelImportResult) -> None:
        for error in result.errors:
            self.stderr.write(f"skipped {error}")
        for note in result.notes:
            self.stdout.write(note)
        self.stdout.write(
            self.style.SUCCESS(
                f"{result.created} labels imported, {result.revisions} later rows kept as revisions, "
                f"{result.unchanged} unchanged and {result.revised} revised from an earlier import, "
                f"{result.identities_created} new imported annotators, {result.skipped} bad rows skipped."
            )
        )
