"""The OpenAPI schema describes the endpoints, and Swagger UI is served from local static files only."""

from __future__ import annotations

import re

from django.test import Client


def test_schema_lists_the_endpoints(db):
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/projects/",
        "/api/projects/{project_id}/items/import/",
        "/api/jobs/{job_id}/",
        "/api/projects/{project_id}/annotations/",
        "/api/projects/{project_id}/labels/import/",
        "/api/projects/{project_id}/stats/",
        "/api/projects/{project_id}/export/",
        "/api/projects/{project_id}/study-links/",
        "/api/projects/{project_id}/study-links/{link_id}/participants/",
    ):
        assert path in paths, path


def test_swagger_ui_uses_no_external_url(db):
    response = Client().get("/api/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    urls = re.findall(r"""(?:src|href)=["']([^"']+)""", html)
    assert [url for url in urls if re.match(r"(https?:)?//", url)] == []
    assert "cdn" not in html.lower()
    bundle = [url for url in urls if url.endswith("swagger-ui-bundle.js")]
    assert bundle
    assert Client().get(bundle[0]).status_code == 200
