"""The leaderboard read from the database clusters its intervals by the prompt (items sharing a prompt text are one
cluster), by the item or by a metadata field, as asked and as stated in the answer; its prior is settable (0: the
plain fit) and its figures equal the maths run by hand on the same comparisons; every source carries simultaneous
rank intervals and a style-controlled fit; bad parameters are refused by name."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.cache import cache

from aggregation.conclusions.selectors import conclusions_for_project
from aggregation.maths import leaderboard
from aggregation.maths.style import style_differences
from projects.models import Item, Membership, Project, Response
from tests.aggregation.conftest import annotate_binary, project_make
from tests.factories import MembershipFactory

MODELS = ("alpha", "beta", "gamma")
PROMPTS = 6


@pytest.fixture
def world(lead):
    """Six prompts, each asked of the three pairs of models (18 items); three annotators label every item."""
    project, items, annotators = project_make(mode=Project.Mode.BINARY, n_items=3 * PROMPTS)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    rng = np.random.default_rng(9)
    rows = []  # (prompt, item index, first model, second model, outcome, first text, second text)
    pairs = ((0, 1), (0, 2), (1, 2))
    for k, item in enumerate(items):
        prompt, (a, b) = k // 3, pairs[k % 3]
        Item.objects.filter(pk=item.pk).update(prompt=f"Question {prompt}?", metadata={"question_id": prompt % 2})
        texts = (
            "word " * int(rng.integers(5, 60)) + "**b** " * int(rng.integers(0, 3)),
            "**b** " * int(rng.integers(1, 9)),
        )
        for position, (model, text) in enumerate(zip((a, b), texts, strict=True)):
            Response.objects.filter(item=item, position=position).update(model_name=MODELS[model], text=text)
        for annotator in annotators:
            choice = int(rng.random() < 0.35 + 0.15 * (b - a))
            annotate_binary(item, annotator, choice)
            outcome = leaderboard.LOSS if choice else leaderboard.WIN
            rows.append((prompt, k, a, b, outcome, *texts))
    cache.clear()
    return project, rows


def _by_hand(rows, cluster_of, prior, covariates=False) -> leaderboard.Fit:
    c = leaderboard.Comparisons(
        np.array([cluster_of(r) for r in rows]),
        np.array([r[2] for r in rows]),
        np.array([r[3] for r in rows]),
        np.array([r[4] for r in rows]),
        np.ones(len(rows)),
    )
    z = style_differences([r[5] for r in rows], [r[6] for r in rows]) if covariates else None
    if z is not None:
        z = z[:, np.ptp(z, axis=0) > 0]
    return leaderboard.fit(c, 3, prior=prior, covariates=z)


def _table(entry) -> dict[str, tuple[float, list[float]]]:
    return {row["model"]: (row["strength"], row["strength_ci"]) for row in entry["rows"]}


@pytest.mark.parametrize(
    ("cluster", "cluster_of", "clusters"),
    [
        ("prompt", lambda r: r[0], PROMPTS),
        ("item", lambda r: r[1], 3 * PROMPTS),
        ("metadata:question_id", lambda r: r[0] % 2, 2),
    ],
)
def test_intervals_are_clustered_as_asked(world, cluster, cluster_of, clusters):
    project, rows = world
    figures = conclusions_for_project(project=project, cluster=cluster, prior=0.0)
    entry = figures["leaderboard"]["human_all"]
    assert figures["cluster"] == cluster
    assert entry["clusters"] == clusters
    expected = _by_hand(rows, cluster_of, prior=0.0)
    for k, model in enumerate(MODELS):
        strength, ci = _table(entry)[model]
        assert strength == pytest.approx(expected.strength[k], abs=1e-9)
        assert ci == pytest.approx(list(expected.strength_ci[k]), abs=1e-9)


def test_the_prior_is_settable_and_changes_the_fit(world):
    project, rows = world
    plain = _table(conclusions_for_project(project=project, prior=0.0)["leaderboard"]["human_all"])
    strong = _table(conclusions_for_project(project=project, prior=5.0)["leaderboard"]["human_all"])
    spread = lambda table: max(v[0] for v in table.values()) - min(v[0] for v in table.values())  # noqa: E731
    assert spread(strong) < spread(plain)  # a strong prior pulls the strengths together
    expected = _by_hand(rows, lambda r: r[0], prior=5.0)
    assert strong["alpha"][0] == pytest.approx(expected.strength[0], abs=1e-9)


def test_ranks_come_with_simultaneous_intervals_and_style_is_controlled(world):
    project, rows = world
    entry = conclusions_for_project(project=project, prior=0.0)["leaderboard"]["human_all"]
    for row in entry["rows"]:
        low, high = row["rank_ci"]
        assert 1 <= low <= row["rank"] <= high <= 3
    styled = entry["style_controlled"]
    expected = _by_hand(rows, lambda r: r[0], prior=0.0, covariates=True)
    assert [e["feature"] for e in styled["effects"]] == ["length", "bold"]  # headers and lists never vary here
    assert styled["effects"][0]["effect"] == pytest.approx(expected.style[0], abs=1e-9)
    by_model = {row["model"]: row["strength"] for row in styled["rows"]}
    assert by_model["gamma"] == pytest.approx(expected.strength[2], abs=1e-9)


def test_the_page_and_api_name_bad_parameters(world, client, lead):
    project, _ = world
    client.force_login(lead)
    api = f"/api/projects/{project.pk}/conclusions/"
    assert client.get(api, {"cluster": "prompt", "prior": "0"}).status_code == 200
    for params, name in (({"cluster": "nonsense"}, "cluster"), ({"prior": "-1"}, "prior"), ({"prior": "x"}, "prior")):
        answer = client.get(api, params)
        assert answer.status_code == 400
        assert name in answer.json()["errors"]
    page = f"/projects/{project.pk}/conclusions/"
    assert client.get(page, {"cluster": "item"}).status_code == 200
    assert b"Rank (95 %, simultaneous)" in client.get(page).content
    assert client.get(page, {"cluster": "nonsense"}).status_code == 404
