"""An upload is streamed to disk by Django (FILE_UPLOAD_MAX_MEMORY_SIZE) and copied into the job's parts one
megabyte at a time, so the web process's peak memory does not grow with the file: a large import posted to a real
gunicorn worker raises its peak resident size (VmHWM) by a small multiple of one part, not by several times the
file (about 9 × before, when every part was put in one list). UPLOAD_MB sets the size (the guide's figure: 500)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from rest_framework.authtoken.models import Token

from projects.models import Job, JobChunk, Membership
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.processes import shared_redis_url
from tests.stack import penumbra_stack

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

UPLOAD_MB = int(os.environ.get("UPLOAD_MB", "100"))
# What one worker may add to its peak while taking the upload: Django's 64 KiB reads, one 1 MiB part and the
# driver's copies of it, with room for the interpreter's allocator; far below one copy of the file.
GROWTH_LIMIT_MB = 60


def _jsonl(path: Path, megabytes: int) -> None:
    line = json.dumps({"id": "x", "prompt": "p" * 900, "responses": ["a", "b"]})
    with path.open("w") as out:
        written, n = 0, 0
        while written < megabytes * 1024 * 1024:
            row = line.replace('"x"', f'"u{n}"') + "\n"
            out.write(row)
            written += len(row)
            n += 1


def _peak_kb(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1])
    raise AssertionError("no VmHWM")


def _worker_pid(master: int) -> int:
    children = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
    assert len(children) == 1, children
    return int(children[0])


def test_a_large_upload_leaves_the_web_process_peak_flat(transactional_db, tmp_path):
    project = ProjectFactory(name="Big upload")
    lead = UserFactory(username="big-upload-lead")
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    token = Token.objects.create(user=lead)
    upload = tmp_path / "big.jsonl"
    _jsonl(upload, UPLOAD_MB)
    with penumbra_stack(tmp_path, redis_url=shared_redis_url(), workers=0) as stack:
        worker = _worker_pid(stack.servers[0].pid)
        headers = {"Authorization": f"Token {token.key}"}
        httpx.get(f"{stack.url}/api/projects/{project.pk}/", headers=headers, timeout=30)  # warm: imports loaded
        before = _peak_kb(worker)
        started = time.monotonic()
        with upload.open("rb") as body:
            response = httpx.post(
                f"{stack.url}/api/projects/{project.pk}/items/import/",
                headers=headers,
                files={"file": ("big.jsonl", body, "application/jsonl")},
                data={"dry_run": "true"},
                timeout=600,
            )
        assert response.status_code == 202, response.text[:300]
        growth_mb = (_peak_kb(worker) - before) / 1024
        print(
            f"upload {UPLOAD_MB} MB in {time.monotonic() - started:.1f} s: worker peak {before / 1024:.0f} MB "
            f"-> {_peak_kb(worker) / 1024:.0f} MB (+{growth_mb:.0f} MB)"
        )
    job = Job.objects.get(project=project)
    parts = -(-upload.stat().st_size // (1024 * 1024))
    assert JobChunk.objects.filter(job=job, stream=JobChunk.Stream.INPUT).count() == parts, "the whole file was kept"
    assert growth_mb < GROWTH_LIMIT_MB
