"""On synthetic data with known careful, biased and spamming annotators, both weighting schemes (Eq. 8 and the
iterative consensus) rank the careful above the spammers and bring the aggregate closer to the truth than the
plain mean; missing parts of Eq. 8 are renormalised away, not scored as zero."""

from __future__ import annotations

import numpy as np
import pytest

from aggregation.maths import ifs, weights

CAREFUL, BIASED, SPAMMERS = [0, 1, 2], [3, 4], [5, 6, 7]


def make_valid(mu: np.ndarray, nu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu, nu = np.clip(mu, 0, 1), np.clip(nu, 0, 1)
    total = mu + nu
    scale = np.where(total > 1, total, 1.0)
    return np.round(mu / scale, 3), np.floor(nu / scale * 1000) / 1000


def synthetic(seed: int = 0, n_items: int = 600) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    true_mu = rng.uniform(0, 1, (n_items, 2))
    true_nu = rng.uniform(0, 1, (n_items, 2)) * (1 - true_mu)
    n_annotators = 8
    mu = np.empty((n_items, 2, n_annotators))
    nu = np.empty_like(mu)
    again_mu = np.empty_like(mu)
    again_nu = np.empty_like(mu)
    for a in range(n_annotators):
        for target_mu, target_nu in ((mu, nu), (again_mu, again_nu)):
            if a in CAREFUL:
                m, v = (
                    true_mu + rng.normal(0, 0.05, true_mu.shape),
                    true_nu + rng.normal(0, 0.05, true_mu.shape),
                )
            elif a in BIASED:  # systematically too generous
                m, v = true_mu + 0.25, true_nu - 0.2
            else:  # spammers: uniform noise, a fresh draw on every repeat
                m = rng.uniform(0, 1, true_mu.shape)
                v = rng.uniform(0, 1, true_mu.shape) * (1 - m)
            target_mu[..., a], target_nu[..., a] = make_valid(m, v)
    mask = rng.random(mu.shape[::2]) < 0.85  # whole items skipped, as annotators do
    mask = np.repeat(mask[:, None, :], 2, axis=1)
    gold = ifs.preferred_response(true_mu - true_nu, 0.1)
    gold[60:] = ifs.UNDEFINED  # gold on the first 10 % of items only
    return {
        "mu": mu,
        "nu": nu,
        "again_mu": again_mu,
        "again_nu": again_nu,
        "mask": mask,
        "gold": gold,
        "true_mu": true_mu,
        "true_nu": true_nu,
    }


def error_to_truth(data: dict[str, np.ndarray], w: np.ndarray | None, operator: str = "weighted_mean") -> float:
    out = ifs.aggregate(data["mu"], data["nu"], operator, w, data["mask"])  # type: ignore[arg-type]
    return float(np.mean(np.abs(out.mu - data["true_mu"]) + np.abs(out.nu - data["true_nu"])))


@pytest.fixture(scope="module")
def data() -> dict[str, np.ndarray]:
    return synthetic()


@pytest.fixture(scope="module")
def eq8(data) -> weights.AnnotatorWeights:
    return weights.annotator_weights(
        data["mu"],
        data["nu"],
        data["mask"],
        gold=data["gold"],
        repeat_mu=data["again_mu"],
        repeat_nu=data["again_nu"],
        repeat_mask=data["mask"],
    )


def test_eq8_weights_are_a_distribution(eq8) -> None:
    assert eq8.weight.sum() == pytest.approx(1.0)
    assert (eq8.weight >= 0).all()
    assert not eq8.fallback_uniform
    for part in (eq8.consistency, eq8.expertise, eq8.agreement, eq8.quality):
        assert np.isfinite(part).all()
        assert ((part >= 0) & (part <= 1)).all()


def test_eq8_parts_see_what_they_should(eq8) -> None:
    # Careful annotators repeat themselves, spammers do not; biased ones repeat their bias perfectly.
    assert eq8.consistency[CAREFUL].min() > eq8.consistency[SPAMMERS].max()
    assert eq8.consistency[BIASED].min() > 0.99
    # Gold accuracy separates careful from spammers; a uniform bias on both responses keeps the preference.
    assert eq8.expertise[CAREFUL].min() > eq8.expertise[SPAMMERS].max()
    assert eq8.agreement[CAREFUL].min() > eq8.agreement[SPAMMERS].max()
    assert eq8.weight[CAREFUL].min() > eq8.weight[SPAMMERS].max()
    assert eq8.n_gold.min() > 30


@pytest.mark.parametrize("operator", ifs.OPERATORS)
def test_eq8_weights_bring_the_aggregate_closer_to_the_truth(data, eq8, operator: str) -> None:
    assert error_to_truth(data, eq8.weight, operator) < error_to_truth(data, None, operator)


def test_iterative_consensus_converges_and_recovers_the_truth(data) -> None:
    result = weights.iterative_consensus_weights(data["mu"], data["nu"], data["mask"])
    assert result.converged
    assert result.iterations < 100
    assert result.loss_history[-1] < 1e-9
    assert result.weight.sum() == pytest.approx(1.0)
    assert result.weight[CAREFUL].min() > 5 * result.weight[SPAMMERS].max()
    assert result.weight[CAREFUL].min() > result.weight[BIASED].max()
    plain = error_to_truth(data, None)
    weighted = error_to_truth(data, result.weight)
    assert weighted < 0.6 * plain
    assert weighted < error_to_truth(data, weights.annotator_weights(data["mu"], data["nu"], data["mask"]).weight)


def test_consensus_including_oneself_lets_one_careful_annotator_take_over(data) -> None:
    """Why exclude_self is the default: with self-inclusion (and no shrinkage) the careful annotators compete for
    the weight; the shrinkage toward equal weight tempers that feedback too."""
    result = weights.iterative_consensus_weights(
        data["mu"], data["nu"], data["mask"], exclude_self=False, prior_items=0
    )
    assert result.converged
    assert result.weight.max() > 0.9
    assert int(np.argmax(result.weight)) in CAREFUL
    shrunk = weights.iterative_consensus_weights(data["mu"], data["nu"], data["mask"], exclude_self=False)
    assert shrunk.weight.max() < 0.5


def test_without_gold_or_repeats_the_weight_rests_on_agreement(data) -> None:
    result = weights.annotator_weights(data["mu"], data["nu"], data["mask"])
    assert np.isnan(result.consistency).all()
    assert np.isnan(result.expertise).all()
    np.testing.assert_allclose(result.quality, result.agreement)
    np.testing.assert_allclose(result.weight, result.agreement / result.agreement.sum())


def test_missing_parts_renormalise_the_remaining_coefficients(data) -> None:
    gold = data["gold"].copy()
    gold[:] = ifs.UNDEFINED
    gold[:60] = data["gold"][:60]
    # Annotator 0 has no judgment on any gold item: weighted on consistency and agreement only.
    mask = data["mask"].copy()
    mask[:60, :, 0] = False
    result = weights.annotator_weights(
        data["mu"],
        data["nu"],
        mask,
        coefficients=(0.5, 0.3, 0.2),
        gold=gold,
        repeat_mu=data["again_mu"],
        repeat_nu=data["again_nu"],
    )
    assert np.isnan(result.expertise[0])
    assert result.n_gold[0] == 0
    assert result.quality[0] == pytest.approx((0.5 * result.consistency[0] + 0.2 * result.agreement[0]) / 0.7)
    assert result.quality[1] == pytest.approx(
        0.5 * result.consistency[1] + 0.3 * result.expertise[1] + 0.2 * result.agreement[1]
    )


def test_an_annotator_without_judgments_gets_no_weight(data) -> None:
    mask = data["mask"].copy()
    mask[..., 4] = False
    result = weights.annotator_weights(data["mu"], data["nu"], mask)
    assert result.weight[4] == 0.0
    assert result.n_values[4] == 0
    assert result.as_rows()[4]["agreement"] is None
    consensus = weights.iterative_consensus_weights(data["mu"], data["nu"], mask)
    assert consensus.weight[4] == 0.0


def test_no_usable_part_falls_back_to_uniform(data) -> None:
    result = weights.annotator_weights(data["mu"], data["nu"], data["mask"], coefficients=(0.0, 1.0, 0.0))
    assert result.fallback_uniform
    np.testing.assert_allclose(result.weight, np.full(8, 1 / 8))


def test_hesitation_variance_proxy_is_offered_and_weak(data) -> None:
    result = weights.annotator_weights(data["mu"], data["nu"], data["mask"], consistency_source="hesitation_variance")
    # Var π ≤ 1/4, so the proxy never leaves [0.75, 1]: it can barely tell annotators apart.
    assert ((result.consistency >= 0.75) & (result.consistency <= 1.0)).all()


def test_coefficients_must_sum_to_one(data) -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        weights.annotator_weights(data["mu"], data["nu"], coefficients=(0.5, 0.5, 0.5))
