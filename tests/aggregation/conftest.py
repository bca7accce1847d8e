"""Small projects with annotations written straight through the models, so these tests depend on no page."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
import redis
from django.db.models import F

from aggregation import dispatch
from annotation.models import Annotation, JudgmentValue
from projects.models import Item, Membership, Project
from tests.factories import ItemFactory, MembershipFactory, ProjectFactory, UserFactory
from tests.processes import Worker, new_queue, purge_queue, shared_redis_url

# One response's values: (μ, ν) per-mille for one criterion, or a list of them, one per criterion in order.
ResponseValues = tuple[int, int] | Sequence[tuple[int, int]]


@pytest.fixture(autouse=True)
def _aggregation_in_process(settings):
    # The embedded background thread would outlive the test transaction; run the work in-process instead.
    settings.AGGREGATION_IN_THREAD = False


def project_make(
    *,
    mode: str = Project.Mode.IFS,
    criteria: Sequence[tuple[str, float]] = (("overall", 1.0),),
    n_items: int = 3,
    n_annotators: int = 3,
    **fields: object,
) -> tuple[Project, list[Item], list]:
    project = ProjectFactory(mode=mode, criteria=list(criteria), **fields)
    annotators = []
    for n in range(n_annotators):
        user = UserFactory(username=f"{project.slug}-ann{n}")
        MembershipFactory(project=project, user=user, role=Membership.Role.ANNOTATOR)
        annotators.append(user)
    items = ItemFactory.create_batch(n_items, project=project)
    return project, items, annotators


def _annotation(item: Item, annotator, mode: str, time_spent_ms: int, **fields: object) -> Annotation:
    annotation, created = Annotation.objects.update_or_create(
        item=item,
        annotator=annotator,
        defaults={
            "project_id": item.project_id,
            "mode": mode,
            "response_order": [0, 1],
            "time_spent_ms": time_spent_ms,
            **fields,
        },
    )
    if created:
        Item.objects.filter(pk=item.pk).update(annotation_count=F("annotation_count") + 1)
    return annotation


def annotate_ifs(item: Item, annotator, values: Sequence[ResponseValues], time_spent_ms: int = 1000) -> Annotation:
    """``values[position]`` is (μ, ν) per-mille, or a list of (μ, ν) per criterion in the project's order."""
    annotation = _annotation(item, annotator, Project.Mode.IFS, time_spent_ms)
    annotation.values.all().delete()
    responses = list(item.responses.order_by("position"))
    criteria = list(item.project.criteria.order_by("position", "pk"))
    rows = []
    for response, response_values in zip(responses, values, strict=True):
        per_criterion = [response_values] if isinstance(response_values[0], int) else list(response_values)
        for criterion, (mu, nu) in zip(criteria, per_criterion, strict=True):
            rows.append(JudgmentValue(annotation=annotation, response=response, criterion=criterion, mu=mu, nu=nu))
    JudgmentValue.objects.bulk_create(rows)
    return annotation


def annotate_binary(item: Item, annotator, choice: int, time_spent_ms: int = 1000) -> Annotation:
    return _annotation(item, annotator, Project.Mode.BINARY, time_spent_ms, binary_choice=choice)


def annotate_likert(item: Item, annotator, value: int, time_spent_ms: int = 1000) -> Annotation:
    return _annotation(item, annotator, Project.Mode.LIKERT, time_spent_ms, likert_value=value)


@contextmanager
def celery_configured(**overrides: object) -> Iterator[None]:
    """Point the test process's Celery app at another broker or queue, and put everything back afterwards.

    The app caches its connection and producer pools for the first broker it talked to, so both are dropped on
    the way in and on the way out.
    """
    from config.celery import app

    saved = {key: app.conf.get(key) for key in overrides}

    def reset_pools() -> None:
        app._pool = None
        app.amqp._producer_pool = None

    reset_pools()
    app.conf.update(**overrides)
    try:
        yield
    finally:
        app.conf.update(**saved)
        reset_pools()


@pytest.fixture
def worker(transactional_db, tmp_path) -> Iterator[Worker]:
    """A real Celery worker on the shared Redis and a queue of this test's own, the project run debounced by 1 s."""
    queue = new_queue()
    running = Worker(
        log_path=tmp_path / "worker.log",
        broker_url=shared_redis_url(),
        queue=queue,
        env={"AGGREGATION_PROJECT_DELAY": "1"},
    )
    with celery_configured(broker_url=shared_redis_url(), task_always_eager=False, task_default_queue=queue):
        try:
            running.start()
            yield running
        finally:
            running.stop()
            purge_queue(queue)


@pytest.fixture
def queue() -> Iterator[tuple[Any, str]]:
    """A Celery queue of the test's own on the shared Redis (tasks are queued, not run), and a client to read it."""
    name = f"penumbra-test-coalesce-{uuid.uuid4().hex[:12]}"
    url = os.environ["PENUMBRA_TEST_REDIS_URL"]
    with celery_configured(broker_url=url, task_always_eager=False, task_default_queue=name):
        client = redis.Redis.from_url(url)
        try:
            yield client, name
        finally:
            client.delete(name)
            for key in client.scan_iter(f"penumbra:{name}:*"):
                client.delete(key)


def dispatched(callbacks: list[Any]) -> int:
    """How many of the captured after-commit callbacks are aggregation.dispatch's (the recompute it runs may register
    others of its own, such as the webhooks' progress check)."""
    return sum(1 for callback in callbacks if getattr(callback, "func", None) is dispatch._after_commit)
