"""Annotation traffic over HTTP for the fault tests: annotators (one thread each, an API token each) save labels
through ``POST /api/projects/{id}/annotations/`` as penumbra_client would, retrying a 503 or a dropped connection
with the same client token until the save is acknowledged. What was acknowledged is kept, so a test can check that
every acknowledged save is in the database with the values last acknowledged, once. The project's lead requests
exports meanwhile, and the test waits for the figures to catch up.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx
from rest_framework.authtoken.models import Token

from aggregation import services
from annotation.models import Annotation, JudgmentValue
from projects.models import Item, Membership, Project
from tests.aggregation.conftest import project_make
from tests.factories import MembershipFactory, UserFactory


@dataclass
class Annotated:
    """What the annotators were told: the last acknowledged values per (annotator, item), and counts."""

    acknowledged: dict[tuple[int, int], tuple[int, int, int, int]] = field(default_factory=dict)
    saves: int = 0
    retries: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class TrafficProject:
    """A project every annotator labels, with each annotator's API token and its lead's (committed: the server sees
    them)."""

    project: Project
    items: list[Item]
    tokens: dict[int, str]
    lead_token: str

    def annotators(self, urls: Sequence[str]) -> Annotators:
        """Annotators saving through ``urls`` (one each, in turn), started."""
        item_ids = [item.pk for item in self.items]
        return Annotators(urls=urls, project_id=self.project.pk, item_ids=item_ids, tokens=self.tokens).start()

    def export_requested(self, url: str) -> int:
        """A dpo export the lead requests through the API at ``url``; the job's id."""
        answer = httpx.post(
            f"{url}/api/projects/{self.project.pk}/export/?format=dpo",
            headers={"Authorization": f"Token {self.lead_token}"},
            timeout=30,
        )
        assert answer.status_code == 202, answer.text
        return int(answer.json()["job"])

    def figures_fresh(self) -> bool:
        """No item waits for its figures and the project's are current."""
        return not services.stale_items_list() and self.project.pk not in services.stale_projects_list()


def project_with_annotators(*, n_items: int, n_annotators: int) -> TrafficProject:
    project, items, annotators = project_make(n_items=n_items, n_annotators=n_annotators, overlap=n_annotators)
    lead = UserFactory(username=f"{project.slug}-lead")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    tokens = {user.pk: Token.objects.create(user=user).key for user in annotators}
    return TrafficProject(project, items, tokens, Token.objects.create(user=lead).key)


class Annotators:
    """Threads saving labels until ``stop()``; each annotator's last save completes (acknowledged) before it ends,
    so nothing the test did not hear about can land afterwards."""

    def __init__(
        self, *, urls: Sequence[str], project_id: int, item_ids: Sequence[int], tokens: dict[int, str]
    ) -> None:
        self.urls = list(urls)
        self.project_id = project_id
        self.item_ids = list(item_ids)
        self.tokens = tokens
        self.result = Annotated()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(user_id, token, index), daemon=True)
            for index, (user_id, token) in enumerate(tokens.items())
        ]

    def start(self) -> Annotators:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self, timeout: float = 60) -> Annotated:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=timeout)
        alive = [thread for thread in self._threads if thread.is_alive()]
        if alive:
            self.result.failures.append(f"{len(alive)} annotators never got their last save acknowledged")
        return self.result

    def _run(self, user_id: int, token: str, index: int) -> None:
        rng = random.Random(index)
        headers = {"Authorization": f"Token {token}"}
        # A fresh connection per attempt after a failure; kept-alive otherwise, as a client library would.
        with httpx.Client(headers=headers, timeout=30) as client:
            while not self._stop.is_set():
                item_id = rng.choice(self.item_ids)
                mu0, mu1 = rng.randrange(0, 1000, 50), rng.randrange(0, 1000, 50)
                nu0, nu1 = rng.randrange(0, 1001 - mu0, 50), rng.randrange(0, 1001 - mu1, 50)
                body = {
                    "item": item_id,
                    "client_token": uuid.uuid4().hex,
                    "values": [
                        {"position": 0, "criterion": "overall", "mu": mu0 / 1000, "nu": nu0 / 1000},
                        {"position": 1, "criterion": "overall", "mu": mu1 / 1000, "nu": nu1 / 1000},
                    ],
                }
                url = f"{self.urls[index % len(self.urls)]}/api/projects/{self.project_id}/annotations/"
                if not self._save(client, url, body):
                    return
                with self.result.lock:
                    self.result.acknowledged[(user_id, item_id)] = (mu0, nu0, mu1, nu1)
                    self.result.saves += 1

    def _save(self, client: httpx.Client, url: str, body: dict) -> bool:
        """Until acknowledged: a 503 or a dropped connection is retried with the same client token."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                answer = client.post(url, json=body)
            except httpx.HTTPError:
                with self.result.lock:
                    self.result.retries += 1
                time.sleep(0.2)
                continue
            with self.result.lock:
                self.result.statuses[answer.status_code] = self.result.statuses.get(answer.status_code, 0) + 1
            if answer.status_code in (200, 201):
                return True
            if answer.status_code == 503:
                with self.result.lock:
                    self.result.retries += 1
                time.sleep(0.2)
                continue
            with self.result.lock:
                self.result.failures.append(f"save answered {answer.status_code}: {answer.text[:200]}")
            return False
        with self.result.lock:
            self.result.failures.append("a save was never acknowledged within 120 s")
        return False


def saves_missing(project_id: int, result: Annotated) -> list[str]:
    """Acknowledged saves absent or with other values than last acknowledged; annotations nobody acknowledged."""
    stored: dict[tuple[int, int], dict[int, tuple[int, int]]] = {}
    for value in JudgmentValue.objects.filter(annotation__project_id=project_id).values(
        "annotation__annotator_id", "annotation__item_id", "response__position", "mu", "nu"
    ):
        key = (value["annotation__annotator_id"], value["annotation__item_id"])
        stored.setdefault(key, {})[value["response__position"]] = (value["mu"], value["nu"])
    problems = []
    for key, (mu0, nu0, mu1, nu1) in result.acknowledged.items():
        if stored.get(key) != {0: (mu0, nu0), 1: (mu1, nu1)}:
            problems.append(f"{key}: acknowledged {(mu0, nu0, mu1, nu1)}, stored {stored.get(key)}")
    problems += [f"{key}: stored, never acknowledged" for key in set(stored) - set(result.acknowledged)]
    duplicates = Annotation.objects.filter(project_id=project_id).count() - len(stored)
    if duplicates:
        problems.append(f"{duplicates} annotations beyond one per (annotator, item)")
    return problems
