"""The export is streamed: a generator over keyset pages whose query count follows pages, not rows."""

from __future__ import annotations

import json

from django.db import connection
from django.http import StreamingHttpResponse
from django.test.utils import CaptureQueriesContext

from aggregation.exports.stream import ExportOptions, export_lines
from tests.exports.builders import aggregate_item
from tests.factories import ItemFactory


def _queries_for(project, chunk_size):
    with CaptureQueriesContext(connection) as captured:
        lines = list(export_lines(project=project, options=ExportOptions(format="dpo"), chunk_size=chunk_size))
    return len(captured), lines


def test_queries_grow_with_pages_not_with_items(project):
    for item in project.items.all():
        aggregate_item(item=item, scores=[(0.1, 0.7), (0.8, 0.1)])
    six, lines_six = _queries_for(project, chunk_size=100)
    for item in ItemFactory.create_batch(30, project=project):
        aggregate_item(item=item, scores=[(0.1, 0.7), (0.8, 0.1)])
    thirty_six, lines_thirty_six = _queries_for(project, chunk_size=100)

    assert len(lines_six) == 6
    assert len(lines_thirty_six) == 36
    assert six == thirty_six
    paged, lines_paged = _queries_for(project, chunk_size=10)
    assert lines_paged == lines_thirty_six
    assert paged > thirty_six  # four pages instead of one: the page size, not the project, bounds memory


def test_api_answers_with_a_stream_of_json_lines(labelled_project, lead_client):
    response = lead_client.get(f"/api/projects/{labelled_project.pk}/export/?format=dpo&pairs=all")

    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"].startswith("application/jsonl")
    assert "attachment" in response["Content-Disposition"]
    body = b"".join(response.streaming_content).decode()
    assert [json.loads(line)["prompt"] for line in body.splitlines()][:1] == [
        labelled_project.items.order_by("id").first().prompt
    ]


def test_api_names_a_bad_filter(labelled_project, lead_client):
    response = lead_client.get(f"/api/projects/{labelled_project.pk}/export/?format=parquet&max_hesitation=2")

    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"format", "max_hesitation"}
