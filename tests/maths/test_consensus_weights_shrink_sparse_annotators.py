"""The iterative consensus weights are shrunk toward equal weight by how many labels an annotator has, so one with a
handful of labels cannot take almost all the weight (without the shrinkage, six labels on items where the others
happened to agree gave one annotator 0.9998 of it). Checked on simulated sparse labels and on the real
summarize-from-feedback batch 13 (27 workers with 10 to 114 labels)."""

from __future__ import annotations

import numpy as np
import pytest

from aggregation.maths import agreement, weights
from tests.data import comparisons


def _as_ifs(signed: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Signed preferences (items × annotators) → the degenerate IFS the services use for non-slider projects."""
    s = np.where(present, signed, 0.0)
    mu = np.stack([np.clip(s, 0, 1), np.clip(-s, 0, 1)], axis=1)
    nu = np.stack([np.clip(-s, 0, 1), np.clip(s, 0, 1)], axis=1)
    return mu, nu, np.repeat(present[:, None, :], 2, axis=1)


def sparse_binary(seed: int, n_items: int = 60, n_annotators: int = 20) -> tuple[np.ndarray, ...]:
    """Each annotator labels 4-8 random items, right 80 % of the time."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n_items)
    present = np.zeros((n_items, n_annotators), dtype=bool)
    for a in range(n_annotators):
        present[rng.choice(n_items, rng.integers(4, 9), replace=False), a] = True
    choice = np.where(rng.random(present.shape) < 0.8, truth[:, None], 1 - truth[:, None])
    return (*_as_ifs(np.where(choice == 0, 1.0, -1.0), present), present.sum(axis=0))


@pytest.mark.parametrize("seed", range(5))
def test_no_annotator_with_a_few_labels_dominates_sparse_data(seed: int) -> None:
    mu, nu, mask, n_labels = sparse_binary(seed)
    n_annotators = n_labels.size
    shrunk = weights.iterative_consensus_weights(mu, nu, mask)
    assert shrunk.converged
    assert shrunk.weight.sum() == pytest.approx(1.0)
    assert shrunk.weight.max() < 2.0 / n_annotators, (shrunk.weight.max(), n_labels[np.argmax(shrunk.weight)])


def test_without_the_shrinkage_sparse_data_give_one_annotator_everything() -> None:
    """The failure the shrinkage exists for, so the test above cannot pass by accident: on every seed one annotator
    with at most 8 labels takes far more than twice the equal share, on some nearly all of it."""
    largest = []
    for seed in range(5):
        mu, nu, mask, n_labels = sparse_binary(seed)
        plain = weights.iterative_consensus_weights(mu, nu, mask, prior_items=0)
        assert plain.weight.max() > 5.0 / n_labels.size
        assert n_labels[np.argmax(plain.weight)] <= 8
        largest.append(plain.weight.max())
    assert max(largest) > 0.99


def test_shrinkage_fades_as_annotators_label_more() -> None:
    """With hundreds of labels per annotator the prior is a few pseudo-items among them: weights barely move."""
    rng = np.random.default_rng(3)
    truth = rng.uniform(-1, 1, 500)
    noise = np.array([0.1, 0.1, 0.2, 0.4, 0.6])
    signed = np.clip(truth[:, None] + rng.normal(0, noise, (500, 5)), -1, 1)
    mu, nu, mask = _as_ifs(signed, np.ones(signed.shape, dtype=bool))
    shrunk = weights.iterative_consensus_weights(mu, nu, mask)
    plain = weights.iterative_consensus_weights(mu, nu, mask, prior_items=0)
    np.testing.assert_allclose(shrunk.weight, plain.weight, atol=0.03)
    assert list(np.argsort(-shrunk.weight)[:2]) in ([0, 1], [1, 0])


def test_prior_items_must_not_be_negative() -> None:
    mu, nu, mask, _ = sparse_binary(0)
    with pytest.raises(ValueError, match="prior_items"):
        weights.iterative_consensus_weights(mu, nu, mask, prior_items=-1)


@pytest.fixture(scope="module")
def batch13() -> dict[str, np.ndarray]:
    rows = comparisons("batch13")
    posts, workers = [r["info"]["id"] for r in rows], [r["worker"] for r in rows]
    choice, present, _, _ = agreement.units_by_coders(posts, workers, [r["choice"] for r in rows])
    confidence, _, _, _ = agreement.units_by_coders(posts, workers, [r["extra"]["confidence"] for r in rows])
    return {
        "choice": agreement.signed_preference_binary(choice, present),
        "confidence": agreement.signed_preference_likert(confidence, 9, present),
        "present": present,
    }


@pytest.mark.parametrize("labels", ["choice", "confidence"])
@pytest.mark.parametrize("exclude_self", [True, False])
def test_real_sparse_workers_do_not_dominate(batch13, labels: str, exclude_self: bool) -> None:
    present = batch13["present"]
    n_labels = present.sum(axis=0)
    few = n_labels <= 20
    assert few.sum() >= 5  # batch 13 has 7 workers with 10-20 labels
    mu, nu, mask = _as_ifs(batch13[labels], present)
    shrunk = weights.iterative_consensus_weights(mu, nu, mask, exclude_self=exclude_self)
    equal_share = 1.0 / n_labels.size
    assert shrunk.converged
    assert shrunk.weight[few].max() < 2.0 * equal_share
    assert shrunk.weight.max() < 4.0 * equal_share


def test_real_sparse_workers_dominate_without_the_shrinkage(batch13) -> None:
    present = batch13["present"]
    few = present.sum(axis=0) <= 20
    mu, nu, mask = _as_ifs(batch13["choice"], present)
    plain = weights.iterative_consensus_weights(mu, nu, mask, prior_items=0)
    assert plain.weight[few].max() > 4.0 / present.shape[1]
