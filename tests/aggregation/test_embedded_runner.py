"""Embedded mode: one background thread does the work a commit schedules, merging bursts, and survives errors."""

from __future__ import annotations

import threading

from aggregation import embedded, services


def test_the_thread_recomputes_items_then_the_project_once_per_burst(monkeypatch, request):
    calls: list[tuple[str, int, tuple[int, ...]]] = []
    taken = threading.Event()
    release = threading.Event()
    done = threading.Event()

    def items(*, project_id, item_ids):
        taken.set()  # the thread has taken this batch off the runner
        release.wait(5)  # hold the thread so a burst piles up behind it
        calls.append(("items", project_id, tuple(item_ids)))

    def project(*, project_id):
        calls.append(("project", project_id, ()))
        if len([c for c in calls if c[0] == "project"]) == 2:
            done.set()
        return {}

    monkeypatch.setattr(services, "item_aggregates_recompute", items)
    monkeypatch.setattr(services, "project_aggregates_recompute", project)
    runner = embedded.EmbeddedRunner(reconcile_seconds=None)
    request.addfinalizer(runner.stop)

    runner.submit(7, [1])
    assert taken.wait(5)  # not a guess: the next submits must come after the thread took the first one
    runner.submit(7, [2])
    runner.submit(7, [3, 2])
    release.set()

    assert done.wait(5)
    assert calls == [("items", 7, (1,)), ("project", 7, ()), ("items", 7, (2, 3)), ("project", 7, ())]


def test_a_failure_is_logged_and_the_thread_keeps_going(monkeypatch, caplog, request):
    done = threading.Event()

    def failing(*, project_id, item_ids):
        raise RuntimeError("database gone")

    def project(*, project_id):
        done.set()
        return {}

    monkeypatch.setattr(services, "item_aggregates_recompute", failing)
    monkeypatch.setattr(services, "project_aggregates_recompute", project)
    runner = embedded.EmbeddedRunner(reconcile_seconds=None)
    request.addfinalizer(runner.stop)

    runner.submit(3, [1])

    assert done.wait(5)
    assert "reconciliation will retry" in caplog.text


def test_the_thread_reconciles_when_it_starts_and_when_idle(monkeypatch, request):
    seen: list[str] = []
    twice = threading.Event()

    def stale_items():
        seen.append("items")
        return {5: [10, 11]}

    def stale_projects():
        if seen.count("items") >= 2:
            twice.set()
        return []

    monkeypatch.setattr(services, "stale_items_list", stale_items)
    monkeypatch.setattr(services, "stale_projects_list", stale_projects)
    monkeypatch.setattr(services, "item_aggregates_recompute", lambda **kwargs: seen.append(f"recompute {kwargs}"))
    monkeypatch.setattr(services, "project_aggregates_recompute", lambda **kwargs: seen.append(f"project {kwargs}"))
    runner = embedded.EmbeddedRunner(reconcile_seconds=0.2)
    request.addfinalizer(runner.stop)

    runner.submit(5, [])

    assert twice.wait(5)
    assert "recompute {'project_id': 5, 'item_ids': [10, 11]}" in seen
    assert "project {'project_id': 5}" in seen
