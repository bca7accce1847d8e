"""The maths modules stay importable without Django (notebooks, workers without settings)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def test_importing_the_maths_pulls_in_no_django() -> None:
    code = (
        "import sys\n"
        "import aggregation.ifs, aggregation.agreement, aggregation.intervals, aggregation.weights\n"
        "import aggregation.comparisons, aggregation.sampling, aggregation.accuracy, aggregation.certification\n"
        "import aggregation.position_bias, aggregation.adaptive, aggregation.self_consistency\n"
        "import aggregation.method_comparison, annotation.crossover_design\n"
        "import aggregation.leaderboard, aggregation.ppi, aggregation.annotator_population\n"
        "loaded = sorted(name for name in sys.modules if name == 'django' or name.startswith('django.'))\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""
