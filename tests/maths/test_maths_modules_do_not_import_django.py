"""The maths modules stay importable without Django (notebooks, workers without settings)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def test_importing_the_maths_pulls_in_no_django() -> None:
    code = (
        "import sys\n"
        "import aggregation.maths.ifs, aggregation.maths.agreement, aggregation.maths.intervals\n"
        "import aggregation.maths.weights, aggregation.maths.comparisons, aggregation.maths.sampling\n"
        "import aggregation.maths.accuracy, aggregation.maths.certification\n"
        "import aggregation.maths.position_bias, aggregation.maths.adaptive, aggregation.maths.self_consistency\n"
        "import aggregation.maths.method_comparison, annotation.method_study.design\n"
        "import aggregation.maths.leaderboard, aggregation.maths.ppi, aggregation.maths.annotator_population\n"
        "import aggregation.maths.selective_risk, aggregation.maths.alt_test, aggregation.maths.distributional\n"
        "import aggregation.maths.label_budget, aggregation.maths.hesitation_calibration\n"
        "loaded = sorted(name for name in sys.modules if name == 'django' or name.startswith('django.'))\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""
