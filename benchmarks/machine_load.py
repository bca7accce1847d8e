"""The machine's load before and after a benchmark, printed with its figures: a figure measured while other work
used the cores says so. Linux only (/proc/stat, the load average)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager


def _cpu_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of all cores since boot; iowait counts as idle."""
    with open("/proc/stat") as handle:
        fields = [int(value) for value in handle.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def _busy(before: tuple[int, int], after: tuple[int, int]) -> float:
    busy, total = after[0] - before[0], after[1] - before[1]
    return busy / total if total else 0.0


def load_line(when: str, sample_seconds: float = 1.0) -> str:
    before = _cpu_ticks()
    time.sleep(sample_seconds)
    busy = _busy(before, _cpu_ticks())
    one, five, fifteen = os.getloadavg()
    return (
        f"machine load {when}: load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) on "
        f"{os.cpu_count()} cores; all cores {busy:.0%} busy over {sample_seconds:g} s"
    )


@contextmanager
def load_reported() -> Iterator[None]:
    """Prints the load before, and after the block the load then and how busy the cores were over the whole block
    (this benchmark's own processes included)."""
    print(load_line("before"), flush=True)
    started = _cpu_ticks()
    try:
        yield
    finally:
        print(f"all cores {_busy(started, _cpu_ticks()):.0%} busy during the benchmark", flush=True)
        print(load_line("after"), flush=True)
