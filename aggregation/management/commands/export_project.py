from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from aggregation.exports.card import export_card
from aggregation.exports.options import FORMATS, PAIRS, TIES, ExportOptions, check_export_options
from aggregation.exports.stream import export_count, export_lines
from aggregation.models import Provenance
from projects.management.commands.import_items import project_from_argument


class Command(BaseCommand):
    help = "Export a project as JSON Lines (dpo, soft, ifs or annotations), streamed with constant memory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug or id")
        parser.add_argument("--format", choices=FORMATS, default="dpo")
        parser.add_argument("--output", type=Path, help="file to write (default: standard output, no progress bar)")
        parser.add_argument("--min-annotators", type=int)
        parser.add_argument("--max-hesitation", type=float, help="IFS only: binary and Likert items have none")
        parser.add_argument("--min-agreement", type=float, help="item agreement among annotators (every mode)")
        parser.add_argument(
            "--min-margin", type=float, help="leave out pairs whose consensus margin (0..2) is below this"
        )
        parser.add_argument(
            "--metadata", default="", help="item metadata keys to add as columns metadata_<key>, comma-separated"
        )
        parser.add_argument("--provenance", choices=Provenance.values)
        parser.add_argument("--pairs", choices=PAIRS, default="best_worst", help="items with more than two responses")
        parser.add_argument(
            "--ties",
            choices=TIES,
            help="ties (within the tie tolerance, or evenly split votes): exclude (default for dpo) or mark "
            '(default for soft and ifs: kept with "tie": true)',
        )

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_from_argument(options["project"])
        export = ExportOptions(
            format=options["format"],
            min_annotators=options["min_annotators"],
            max_hesitation=options["max_hesitation"],
            min_agreement=options["min_agreement"],
            min_margin=options["min_margin"],
            provenance=options["provenance"],
            pairs=options["pairs"],
            ties=options["ties"],
            metadata=tuple(key.strip() for key in options["metadata"].split(",") if key.strip()),
        )
        try:
            check_export_options(export)
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
        output: Path | None = options["output"]
        if output is None:
            for line in export_lines(project=project, options=export):
                sys.stdout.write(line)
            return
        unit = "label" if export.format in ("annotations", "rankings") else "item"
        written = 0
        with (
            output.open("w", encoding="utf-8") as handle,
            tqdm(
                total=export_count(project=project, options=export), unit=unit, desc=f"exporting {export.format}"
            ) as bar,
        ):

            def on_unit() -> None:
                bar.update(1)

            for line in export_lines(project=project, options=export, on_unit=on_unit):
                handle.write(line)
                written += 1
        card = output.with_name("README.md")
        card.write_text(export_card(project=project, options=export), encoding="utf-8")
        self.stderr.write(self.style.SUCCESS(f"{written} lines written to {output}; its dataset card to {card}."))
