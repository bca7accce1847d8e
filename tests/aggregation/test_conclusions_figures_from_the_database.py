"""The conclusions read from the database equal the maths run on the same labels by hand: the leaderboard per source
(blind, shown, gold, LLM), the prediction-powered figures on the blind sample, and human-human agreement; and only
the project's leads can read them (page, CSV, SVG, API), everyone else gets 404."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from django.core.cache import cache

from aggregation.conclusions.selectors import conclusions_for_project
from aggregation.maths import leaderboard
from annotation.models import Annotation
from projects.models import TIE, Item, Membership, Project, Response
from tests.aggregation.conftest import annotate_binary, project_make
from tests.factories import MembershipFactory, SuggestionFactory

MODELS = ("alpha", "beta", "gamma")


def _world(lead):
    """12 items, each a pair of the three models; three annotators; the first six items blind (π = 0.5)."""
    project, items, annotators = project_make(mode=Project.Mode.BINARY, n_items=12, blind_rate=0.5)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    rng = np.random.default_rng(4)
    expected = []  # (item index, first model, second model, outcome, blind)
    for k, item in enumerate(items):
        a, b = k % 3, (k + 1 + k // 6) % 3
        if a == b:
            b = (a + 1) % 3
        Response.objects.filter(item=item, position=0).update(model_name=MODELS[a])
        Response.objects.filter(item=item, position=1).update(model_name=MODELS[b])
        blind = k < 6
        Item.objects.filter(pk=item.pk).update(is_blind=blind, blind_inclusion_probability=0.5 if blind else None)
        SuggestionFactory(item=item, preferred_position=int(k % 4 == 0))
        Item.objects.filter(pk=item.pk).update(gold_position=0 if k % 2 else 1)
        for annotator in annotators:
            choice = int(rng.choice([0, 1, TIE], p=[0.5, 0.35, 0.15]))
            annotation = annotate_binary(item, annotator, choice)
            shown = not blind and rng.random() < 0.7
            Annotation.objects.filter(pk=annotation.pk).update(suggestion_shown=shown)
            outcome = {0: leaderboard.WIN, 1: leaderboard.LOSS, TIE: leaderboard.TIE}[choice]
            expected.append((k, a, b, outcome, not shown))
    cache.clear()
    return project, expected


def _by_hand(rows, keep) -> leaderboard.Fit:
    chosen = [r for r in rows if keep(r)]
    c = leaderboard.Comparisons(
        np.array([r[0] for r in chosen]),
        np.array([r[1] for r in chosen]),
        np.array([r[2] for r in chosen]),
        np.array([r[3] for r in chosen]),
        np.ones(len(chosen)),
    )
    return leaderboard.fit(c, 3)


@pytest.mark.django_db
def test_leaderboards_equal_the_maths_on_the_same_labels(lead):
    project, rows = _world(lead)
    figures = conclusions_for_project(project=project)
    assert figures["models"] == list(MODELS)
    for source, keep in (
        ("human_all", lambda r: True),
        ("human_blind", lambda r: r[4]),
        ("human_shown", lambda r: not r[4]),
    ):
        fitted = _by_hand(rows, keep)
        entry = figures["leaderboard"][source]
        assert entry["comparisons"] == sum(1 for r in rows if keep(r))
        got = {row["model"]: row["strength"] for row in entry["rows"]}
        for m, name in enumerate(MODELS):
            assert got[name] == pytest.approx(fitted.strength[m], abs=1e-9), (source, name)
    gold = figures["leaderboard"]["gold"]
    assert gold["comparisons"] == 12
    assert figures["leaderboard"]["llm"]["comparisons"] == 12


@pytest.mark.django_db
def test_prediction_powered_figures_use_the_blind_sample(lead):
    project, rows = _world(lead)
    figures = conclusions_for_project(project=project)["prediction_powered"]
    assert figures["population_items"] == 12
    assert figures["human_items"] == 6
    share = next(f for f in figures["figures"] if f["key"] == "share_first")
    # People-only: the Hájek mean (equal π here: the plain mean) over the six blind items of their share of
    # labels preferring response 1.
    per_item = [np.mean([r[3] == leaderboard.WIN for r in rows if r[0] == k]) for k in range(6)]
    assert share["human_only"]["value"] == pytest.approx(np.mean(per_item))
    assert share["llm_only"] == pytest.approx(np.mean([k % 4 != 0 for k in range(12)]))
    assert 0.0 <= share["lambda"] <= 1.0
    assert share["ci"][1] - share["ci"][0] <= share["human_only"]["ci"][1] - share["human_only"]["ci"][0] + 1e-12


@pytest.mark.django_db
def test_leads_read_the_page_csv_svg_and_api(lead, lead_client):
    project, _ = _world(lead)
    page = lead_client.get(f"/projects/{project.pk}/conclusions/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "<svg" in body
    assert "alpha" in body
    assert "What it claims" in body
    api = lead_client.get(f"/api/projects/{project.pk}/conclusions/")
    assert api.status_code == 200
    assert set(api.json()["leaderboard"]) == {"human_all", "human_blind", "human_shown", "gold", "llm"}
    exported = lead_client.get(f"/api/projects/{project.pk}/conclusions/?format=csv")
    assert exported.status_code == 200
    table = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert {row["table"] for row in table} >= {
        "leaderboard",
        "win_rate_matrix",
        "prediction_powered",
        "human_agreement",
    }
    page_csv = lead_client.get(f"/projects/{project.pk}/conclusions/figures.csv")
    assert b"".join(page_csv.streaming_content).decode() == exported.content.decode()
    assert lead_client.get(f"/projects/{project.pk}/conclusions/leaderboard.svg").content.startswith(b"<svg")


@pytest.mark.django_db
def test_bad_queries_are_refused_with_a_reason(lead, lead_client):
    project, _ = _world(lead)
    bad = lead_client.get(f"/api/projects/{project.pk}/conclusions/?sample=everything")
    assert bad.status_code == 400
    assert "sample" in str(bad.json())
    assert lead_client.get(f"/api/projects/{project.pk}/conclusions/?criterion=999999").status_code == 404
    assert lead_client.get(f"/projects/{project.pk}/conclusions/?sample=x").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["annotator", "outsider"])
def test_everyone_but_the_lead_gets_404(who, lead, request):
    project, _ = _world(lead)
    user = request.getfixturevalue(who)
    if who == "annotator":
        MembershipFactory(project=project, user=user, role=Membership.Role.ANNOTATOR)
    client = request.getfixturevalue(f"{who}_client")
    for url in (
        f"/projects/{project.pk}/conclusions/",
        f"/projects/{project.pk}/conclusions/figures.csv",
        f"/projects/{project.pk}/conclusions/leaderboard.svg",
        f"/api/projects/{project.pk}/conclusions/",
    ):
        assert client.get(url).status_code == 404, url


@pytest.mark.django_db
def test_the_dataset_card_carries_the_leaderboard_and_the_prediction_powered_figures(lead, lead_client):
    project, _ = _world(lead)
    card = lead_client.get(f"/api/projects/{project.pk}/export/card/?format=dpo").content.decode()
    figures = conclusions_for_project(project=project)
    assert "## Conclusions" in card
    blind = figures["leaderboard"]["human_blind"]
    assert f"{blind['comparisons']} comparisons on {blind['items']} items" in card
    top = blind["rows"][0]
    assert f"| 1 | {top['model']} | {top['strength']:.2f}" in card
    ppi = figures["prediction_powered"]
    assert f"people labelled a random sample of {ppi['human_items']} of them" in card
    assert "PPI++" in card
    assert "How often two annotators from the same pool agree" in card


@pytest.mark.django_db
def test_ifs_labels_enter_by_their_signed_preference_weighted_by_confidence():
    from aggregation.conclusions.figures import source_comparisons
    from aggregation.conclusions.selectors import _inputs
    from tests.aggregation.conftest import annotate_ifs

    project, items, annotators = project_make(n_items=1, n_annotators=2)
    Response.objects.filter(item=items[0], position=0).update(model_name="alpha")
    Response.objects.filter(item=items[0], position=1).update(model_name="beta")
    annotate_ifs(items[0], annotators[0], [(600, 100), (200, 500)])  # s = (0.5 − (−0.3))/2 = 0.4, π̄ = 0.3
    annotate_ifs(items[0], annotators[1], [(300, 300), (320, 300)])  # s = −0.01: a tie, π̄ = 0.39
    c = source_comparisons(_inputs(project, None, "blind"), "human_all")
    assert sorted(zip(c.outcome.tolist(), np.round(c.weight, 6).tolist(), strict=True)) == [
        (leaderboard.TIE, 0.61),
        (leaderboard.WIN, 0.7),
    ]
    assert c.first.tolist() == [0, 0]  # alpha, in stored position 0
