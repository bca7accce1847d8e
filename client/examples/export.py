"""Bring preference pairs in, import labels another tool wrote, and take the project's DPO export out.

    PENUMBRA_URL=http://127.0.0.1:8000 PENUMBRA_TOKEN=… python client/examples/export.py annotations.json out/

Checked with ``mypy --strict`` in the test suite: the options are typed (a misspelt format or rule is an error
before anything runs) and so are the rows.
"""

from __future__ import annotations

import sys
from pathlib import Path

from penumbra_client import Penumbra, PreferenceRow
from penumbra_client.types import ExportFormat, RatingsRule

PAIRS: list[PreferenceRow] = [
    {"id": "sky", "prompt": "What colour is the sky?", "chosen": "Blue, on a clear day.", "rejected": "Green."},
    {"id": "spider", "prompt": "How many legs does a spider have?", "chosen": "Eight.", "rejected": "Six."},
]


def main(labels_file: Path, folder: Path) -> None:
    rule: RatingsRule = "binary"
    formats: list[ExportFormat] = ["dpo", "annotations"]
    with Penumbra.from_env() as penumbra:
        project = penumbra.create_project("Imported preferences", mode="binary")
        penumbra.import_items(project, PAIRS, trl_chosen_as="suggestion")
        job = penumbra.import_labels(project, labels_file, format="label-studio", ratings_rule=rule)
        for note in job.result.get("notes", []):
            print(note)
        folder.mkdir(parents=True, exist_ok=True)
        for name in formats:
            written = penumbra.export(project, folder / f"{name}.jsonl", format=name, min_annotators=1)
            print(f"{written}: {written.stat().st_size} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
