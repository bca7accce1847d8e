"""One view serves the page and, for HTMX, only the self-refreshing figures fragment."""


def test_page_is_a_whole_document_with_the_refreshing_fragment(lead_client, computed_project, dashboard_url):
    html = lead_client.get(dashboard_url(computed_project)).content.decode()
    assert html.lstrip().startswith("<!doctype html>")
    assert 'id="dashboard-figures"' in html
    assert 'hx-trigger="every 10s"' in html
    assert "css/dashboard.css" in html


def test_htmx_request_gets_only_the_fragment(lead_client, computed_project, dashboard_url):
    response = lead_client.get(dashboard_url(computed_project), HTTP_HX_REQUEST="true")
    html = response.content.decode().strip()
    assert response.status_code == 200
    assert html.startswith('<div id="dashboard-figures"')
    assert "<html" not in html
    assert "dash-head" not in html  # no page header or tabs, only the figures
    assert 'hx-trigger="every 10s"' in html  # the fragment keeps refreshing itself
    assert "Krippendorff α, interval" in html


def test_fragment_for_an_annotator_is_404(annotator_client, computed_project, dashboard_url):
    response = annotator_client.get(dashboard_url(computed_project), HTTP_HX_REQUEST="true")
    assert response.status_code == 404
