"""The load benchmark's clients: simulated annotators doing what the page does, and a lead polling the stats API
(benchmarks/load.py runs them)."""

from __future__ import annotations

import random
import re
import threading
import time
import uuid
from dataclasses import dataclass, field

PASSWORD = "load-bench-password"
ITEM_ID = re.compile(r'data-item="(\d+)"')
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
FIELD = re.compile(r'name="((?:mu|nu)-(\d+)-(\d+))"')
CLIENT_TOKEN = re.compile(r'name="client_token" value="([^"]*)"')
FORM_ACTION = re.compile(r'id="annotate-form" method="post" action="([^"]+)"')
SKIP_ACTION = re.compile(r'action="([^"]+/skip/)"')


# --- the annotators ------------------------------------------------------------------------------------------------


@dataclass
class Results:
    save_ms: list[float] = field(default_factory=list)  # saves only (each one a labelled item when acknowledged)
    other_ms: list[float] = field(default_factory=list)  # skips, steps back and reloads
    steps: int = 0  # requests the annotators set out to send (the offered load), whatever came of them
    errors: list[str] = field(default_factory=list)
    saves: int = 0
    first_saves: list[float] = field(default_factory=list)  # monotonic ack times of first saves
    # (annotator, item id) → (values acknowledged last, number of acknowledged saves)
    acknowledged: dict[tuple[str, int], tuple[dict[tuple[int, int], tuple[int, int]], int]] = field(
        default_factory=dict
    )
    queue_empty: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


# Password hashing is deliberately slow: 50 logins at once would time out on a small machine before the run starts.
_LOGINS = threading.Semaphore(4)


def _login(client, base: str, username: str) -> None:  # type: ignore[no-untyped-def]
    with _LOGINS:
        _login_now(client, base, username)


def _login_now(client, base: str, username: str) -> None:  # type: ignore[no-untyped-def]
    page = client.get(f"{base}/accounts/login/")
    token = CSRF.search(page.text).group(1)
    response = client.post(
        f"{base}/accounts/login/",
        data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token},
        headers={"Referer": f"{base}/accounts/login/"},
    )
    if response.status_code not in (200, 302) or "sessionid" not in client.cookies:
        raise RuntimeError(f"login of {username} failed: {response.status_code}")


class Annotator(threading.Thread):
    def __init__(
        self,
        *,
        base: str,
        project_id: int,
        username: str,
        results: Results,
        start: threading.Barrier,
        until: list[float],
        interval: float,
        seed: int,
    ) -> None:
        super().__init__(daemon=True)
        self.base, self.project_id, self.username = base, project_id, username
        self.results, self.start_barrier, self.until, self.interval = results, start, until, interval
        self.random = random.Random(seed)

    def _htmx(self, url: str) -> dict[str, str]:
        return {"HX-Request": "true", "HX-Current-URL": url, "HX-Target": "annotate-frame", "Referer": url}

    def run(self) -> None:
        import httpx

        with httpx.Client(timeout=60, follow_redirects=True) as client:
            try:
                _login(client, self.base, self.username)
                page = client.get(f"{self.base}/projects/{self.project_id}/annotate/").text
            except Exception as error:
                with self.results.lock:
                    self.results.errors.append(f"{self.username}: {error}")
                self.start_barrier.wait()
                return
            self.start_barrier.wait()
            next_at = time.monotonic() + self.random.uniform(0, self.interval)
            while time.monotonic() < self.until[0]:
                if self.interval:
                    delay = next_at - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                    next_at = max(next_at + self.interval, time.monotonic() - self.interval)
                    if time.monotonic() >= self.until[0]:
                        break
                with self.results.lock:
                    self.results.steps += 1
                page = self._step(client, page)
                if page is None:
                    break

    def _step(self, client, page: str) -> str | None:  # type: ignore[no-untyped-def]
        item_match, action = ITEM_ID.search(page), FORM_ACTION.search(page)
        if item_match is None or action is None:
            with self.results.lock:
                self.results.queue_empty += 1
            return None
        item_id = int(item_match.group(1))
        url = self.base + action.group(1)
        csrf = CSRF.search(page).group(1)
        roll = self.random.random()
        if roll < 0.03:  # skip with a reason
            skip = SKIP_ACTION.search(page)
            data = {"csrfmiddlewaretoken": csrf, "skip_reason": "I cannot judge this topic"}
            return self._timed(client, "POST", self.base + skip.group(1), data, url, page)
        if roll < 0.06:  # back to the previous item, to edit it
            target = f"{self.base}/projects/{self.project_id}/annotate/previous/?before={item_id}"
            return self._timed(client, "GET", target, None, url, page)
        if roll < 0.10:  # a reload (the page asks for its current item again)
            target = f"{self.base}/projects/{self.project_id}/annotate/"
            return self._timed(client, "GET", target, None, url, page)
        values: dict[tuple[int, int], tuple[int, int]] = {}
        data = {
            "csrfmiddlewaretoken": csrf,
            "client_token": CLIENT_TOKEN.search(page).group(1) or uuid.uuid4().hex,
            "time_spent_ms": str(self.random.randint(2000, 20000)),
            "stage": "label",
        }
        for name, position, criterion in FIELD.findall(page):
            key = (int(position), int(criterion))
            mu, nu = values.get(key, (self.random.randrange(0, 101) * 10, None))
            if name.startswith("nu"):
                nu = self.random.randrange(0, 101 - mu // 10) * 10
            values[key] = (mu, nu if nu is not None else 0)
        for (position, criterion), (mu, nu) in values.items():
            data[f"mu-{position}-{criterion}"], data[f"nu-{position}-{criterion}"] = str(mu), str(nu)
        started = time.monotonic()
        answer = self._request(client, "POST", url, data, url)
        if answer is None:
            return page
        elapsed = (time.monotonic() - started) * 1000
        with self.results.lock:
            self.results.save_ms.append(elapsed)
            if answer.status_code != 200 or "Saved." not in answer.text:
                self.results.errors.append(f"save {answer.status_code}: {answer.text[:120]!r}")
                return answer.text if answer.status_code == 200 else page
            self.results.saves += 1
            key = (self.username, item_id)
            previous = self.results.acknowledged.get(key)
            if previous is None:
                self.results.first_saves.append(time.monotonic())
            self.results.acknowledged[key] = (values, (previous[1] if previous else 0) + 1)
        return answer.text

    def _request(self, client, method: str, url: str, data, current: str):  # type: ignore[no-untyped-def]
        try:
            if method == "POST":
                return client.post(url, data=data, headers=self._htmx(current))
            return client.get(url, headers=self._htmx(current))
        except Exception as error:
            with self.results.lock:
                self.results.errors.append(f"{method} {url}: {type(error).__name__}")
            return None

    def _timed(self, client, method, url, data, current, page):  # type: ignore[no-untyped-def]
        started = time.monotonic()
        answer = self._request(client, method, url, data, current)
        if answer is None:
            return page
        with self.results.lock:
            self.results.other_ms.append((time.monotonic() - started) * 1000)
            if answer.status_code != 200:
                self.results.errors.append(f"{method} {answer.status_code}")
                return page
        return answer.text


class Lead(threading.Thread):
    """Polls the stats API and records (time, labels counted) whenever the count changes."""

    def __init__(self, *, base: str, project_id: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.base, self.project_id, self.stop_event = base, project_id, stop
        self.seen: list[tuple[float, int]] = []
        self.errors = 0

    def run(self) -> None:
        import httpx

        with httpx.Client(timeout=30) as client:
            _login(client, self.base, "load-lead")
            last = -1
            while not self.stop_event.is_set():
                try:
                    response = client.get(f"{self.base}/api/projects/{self.project_id}/stats/")
                    total = int((response.json().get("progress") or {}).get("labels_total", 0))
                except Exception:
                    self.errors += 1
                    total = last
                if total != last:
                    self.seen.append((time.monotonic(), total))
                    last = total
                self.stop_event.wait(0.2)


def freshness(first_saves: list[float], seen: list[tuple[float, int]]) -> list[float]:
    """Seconds from the k-th acknowledged first save to the first poll that counted k labels."""
    lags: list[float] = []
    position = 0
    for k, acked in enumerate(sorted(first_saves), start=1):
        while position < len(seen) and seen[position][1] < k:
            position += 1
        if position == len(seen):
            break
        lags.append(max(0.0, seen[position][0] - acked))
    return lags


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
