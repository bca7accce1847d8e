from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from projects.formats import FORMATS, NATIVE, RATINGS_RULES, RESPONSE_STATUSES
from projects.imports.formats import items_import_formatted
from projects.imports.items import DUPLICATE_POLICIES, TRL_CHOSEN_AS, ImportRejected, ImportResult, items_import
from projects.models import Project


def project_from_argument(value: str) -> Project:
    project = Project.objects.filter(slug=value).first()
    if project is None and value.isdigit():
        project = Project.objects.filter(pk=int(value)).first()
    if project is None:
        raise CommandError(f"No project with slug or id {value!r}.")
    return project


def add_reading_arguments(parser: CommandParser) -> None:
    """How to read another tool's file where the file alone does not say (projects.formats.Options)."""
    parser.add_argument("--scheme", help="the scheme (Potato), control (Label Studio) or question (Argilla) to read")
    parser.add_argument(
        "--ratings-rule", choices=RATINGS_RULES, default="refuse", help="how one rating per response becomes a label"
    )
    parser.add_argument(
        "--statuses", default="submitted", help=f"Argilla responses that count, comma-separated: {RESPONSE_STATUSES}"
    )
    parser.add_argument("--items-key", help="Potato: the data key holding the responses (the config's items_key)")
    parser.add_argument("--scale", help="Potato: the pairwise scale as min..max (e.g. 1..6)")


def reading_from_arguments(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "scheme": options.get("scheme"),
        "ratings_rule": options.get("ratings_rule"),
        "statuses": options.get("statuses"),
        "items_key": options.get("items_key"),
        "scale": options.get("scale"),
    }


class Command(BaseCommand):
    help = (
        "Import items from a JSON Lines file (native or TRL prompt/chosen/rejected shape), or from another tool's "
        "file with --format."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug or id")
        parser.add_argument("file", type=Path)
        parser.add_argument("--skip-invalid", action="store_true", help="import the good rows, report the bad ones")
        parser.add_argument("--on-duplicate", choices=DUPLICATE_POLICIES, default="reject")
        parser.add_argument("--trl-chosen-as", choices=TRL_CHOSEN_AS, default="gold")
        parser.add_argument("--format", choices=FORMATS, default=NATIVE, help="the tool the file comes from")
        add_reading_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_from_argument(options["project"])
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file.")
        if options["format"] != NATIVE:
            self._report(self._formatted(project, path, options))
            return
        with path.open(encoding="utf-8") as handle:
            total = sum(1 for _ in handle)
        with path.open(encoding="utf-8") as handle, tqdm(total=total, unit="row", desc="importing") as bar:

            def progress(done: int, _total: int | None) -> None:
                bar.update(max(0, done - bar.n))

            try:
                result = items_import(
                    project=project,
                    lines=handle,
                    on_duplicate=options["on_duplicate"],
                    skip_invalid=options["skip_invalid"],
                    trl_chosen_as=options["trl_chosen_as"],
                    progress=progress,
                    total_lines=total,
                )
            except ImportRejected as exc:
                bar.close()
                for error in exc.errors:
                    self.stderr.write(str(error))
                raise CommandError(
                    f"{exc.total_errors} bad row(s): nothing imported. Fix them or pass --skip-invalid."
                ) from None
            bar.update(total - bar.n)
        self._report(result)

    def _formatted(self, project: Project, path: Path, options: dict[str, Any]) -> ImportResult:
        with path.open("rb") as handle:
            try:
                return items_import_formatted(
                    project=project,
                    fmt=options["format"],
                    reading=reading_from_arguments(options),
                    handle=handle,
                    on_duplicate=options["on_duplicate"],
                    skip_invalid=options["skip_invalid"],
                    trl_chosen_as=options["trl_chosen_as"],
                )
            except ImportRejected as exc:
                for error in exc.errors:
                    self.stderr.write(str(error))
                raise CommandError(
                    f"{exc.total_errors} bad record(s): nothing imported. Fix them or pass --skip-invalid."
                ) from None

    def _report(self, result: ImportResult) -> None:
        for error in result.errors:
            self.stderr.write(f"skipped {error}")
        for note in result.notes:
            self.stdout.write(note)
        self.stdout.write(
            self.style.SUCCESS(
                f"{result.created} created, {result.updated} updated, {result.skipped} skipped as duplicates, "
                f"{result.invalid} invalid rows skipped."
            )
        )
