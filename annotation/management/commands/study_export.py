from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.crowd.export import FORMATS, participant_export_lines
from annotation.crowd.models import StudyLink


class Command(BaseCommand):
    help = (
        "Export the participants of a study link (ids, start and end, items labelled, skips, time per item, "
        "attention checks, whether the completion code was shown) as CSV or JSON Lines."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("link", type=int, help="study link id (see the project's Study links page or the API)")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--output", type=Path, help="file to write; standard output when absent")

    def handle(self, *args: Any, **options: Any) -> None:
        link = StudyLink.objects.select_related("project").filter(pk=options["link"]).first()
        if link is None:
            raise CommandError(f"No study link with id {options['link']}.")
        lines = participant_export_lines(link=link, export_format=options["format"])
        output: Path | None = options["output"]
        if output is None:
            for line in lines:
                self.stdout.write(line, ending="")
            return
        with output.open("w", encoding="utf-8", newline="") as handle:
            handle.writelines(lines)
        self.stderr.write(f"Wrote {output}.")
