"""From a project's labels to its conclusions: the model leaderboard per source of labels, the prediction-powered
dataset figures and human-human agreement for annotators in general. Pure numpy on a loaded
:class:`aggregation.figures.judgments.Judgments` plus a few arrays (:class:`Inputs`), so a notebook can run it on
arrays it built; :mod:`aggregation.conclusions.selectors` loads them from the database.

**Sources of preferences, side by side.** ``human_all`` (every label), ``human_blind`` (labels saved without the
LLM's suggestion ever shown), ``human_shown`` (the others), ``gold`` (the item's gold preference, one comparison per
item) and ``llm`` (the LLM's suggestion, one per item). An item with responses by two different named models gives
one comparison per label per pair of responses; a response without a model name takes no part.

**A label's preference between two responses** comes from per-response scores S, so items with more than two
responses give every pair: IFS S = μ − ν (criterion-weighted, or of one criterion), binary +1 for the chosen
response and −1 for the others (a tie: 0 for all), Likert (two responses only) S₀ = s, S₁ = −s. The pair's signed
preference is s = (S_r − S_r')/2, the same scale as :mod:`aggregation.maths.signed`, and the project's tie band
(tolerance/2) makes it a tie; an IFS label weighs 1 − π̄, π̄ the mean hesitation of the two responses
(:mod:`aggregation.maths.leaderboard`).

**Clusters and style.** Every interval of the leaderboard sums the likelihood's score over a cluster before
squaring: by default the prompt (items with the same prompt text are one cluster, so the pairs of models compared on
one prompt count as one piece of evidence), else the item or an item metadata field (:class:`Inputs` ``cluster``;
the selector states which). With the answers' style features (``response_style``) each source also gets a
style-controlled fit beside the plain one (:mod:`aggregation.maths.style`), and every fit simultaneous rank intervals
(:mod:`aggregation.maths.rank_intervals`).

**Prediction-powered figures** (:mod:`aggregation.maths.ppi`) on the items with two responses and a suggestion: the
share of labels preferring response 1 (stored position 0), response 2 and neither, the mean signed preference, and each
pair of models' empirical win rate (a tie as half). People's figure per item is the mean over its human labels
*in the sample* (blind labels on blind items, drawn with their recorded inclusion probability); sampled items
without a label yet are left out (missing at random), so the sample size shown is the labelled one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from aggregation.figures.judgments import TIE, FloatArray, IntArray, Judgments, signed_preferences
from aggregation.maths import annotator_population, leaderboard, ppi
from aggregation.maths.rank_intervals import rank_intervals
from aggregation.maths.signed import preference_sign
from aggregation.maths.style import FEATURES

BoolArray = NDArray[np.bool_]
NO_SUGGESTION = -99
SOURCES = ("human_all", "human_blind", "human_shown", "gold", "llm")
SOURCE_LABELS = {
    "human_all": "People, all labels",
    "human_blind": "People, blind labels",
    "human_shown": "People, suggestion shown",
    "gold": "Gold",
    "llm": "LLM suggestions",
}
#: A prediction-powered figure needs this many human-labelled sampled items (as every human-vs-model figure).
MINIMUM_SAMPLE = 5
#: A source needs this many comparisons before its leaderboard is fitted; below it the page says what it needs.
MINIMUM_COMPARISONS = 5


@dataclass(frozen=True)
class Inputs:
    data: Judgments
    models: list[str]  # model names; index = model id
    response_model: IntArray  # (I, R) model index, −1 without a name
    slot_blind: BoolArray  # (I, K) the label was saved without the suggestion shown
    llm_preferred: IntArray  # (I,) position, TIE, or NO_SUGGESTION
    sample_probability: FloatArray  # (I,) inclusion probability of the item in the human sample, NaN if not drawn
    criterion: int | None = None  # index into data.criterion_ids; None: criteria combined by their weights
    cluster: IntArray | None = None  # (I,) the cluster of each item for every interval; None: the item
    response_style: FloatArray | None = None  # (I, R, F) style feature counts per response; None: no style control
    prior: float = leaderboard.DEFAULT_PRIOR

    @property
    def tie_band(self) -> float:
        return float(self.data.settings.tie_tolerance) / 2


def _one_hot_scores(position: IntArray, n_positions: int) -> FloatArray:
    """+1 at the chosen position, −1 elsewhere; TIE: 0 everywhere; NaN where there is no choice."""
    out = np.where(np.arange(n_positions)[None, :] == position[:, None], 1.0, -1.0)
    out[position == TIE] = 0.0
    out[(position < 0) & (position != TIE)] = np.nan
    return out


def label_scores(inputs: Inputs) -> tuple[FloatArray, FloatArray]:
    """Per (item, response, slot) score S and hesitation π (NaN where the label has none)."""
    data = inputs.data
    n_items, n_positions = data.response_ids.shape
    n_slots = data.slot_annotator.shape[1]
    scores = np.full((n_items, n_positions, n_slots), np.nan)
    hesitation = np.full((n_items, n_positions, n_slots), np.nan)
    if n_slots == 0:
        return scores, hesitation
    choice = np.where(np.isnan(data.binary), -100, data.binary).astype(np.int64)
    binary = _one_hot_scores(choice.T.reshape(-1), n_positions).reshape(n_slots, n_items, n_positions)
    scores = np.where(np.isnan(scores), binary.transpose(1, 2, 0), scores)
    two = data.n_responses == 2
    s = signed_preferences(data)  # binary > Likert; IFS overrides, as on the dashboard
    likert = ~np.isnan(data.likert) & two[:, None] & np.isnan(data.binary)
    if likert.any() and n_positions >= 2:
        scores[:, 0, :] = np.where(likert, s, scores[:, 0, :])
        scores[:, 1, :] = np.where(likert, -s, scores[:, 1, :])
    if data.criterion_ids.size and data.present.any():
        if inputs.criterion is None:
            weights = data.criterion_weights / data.criterion_weights.sum()
            complete = data.present.all(axis=2)
            mu = np.einsum("c,ircs->irs", weights, data.mu)
            nu = np.einsum("c,ircs->irs", weights, data.nu)
        else:
            complete = data.present[:, :, inputs.criterion]
            mu, nu = data.mu[:, :, inputs.criterion], data.nu[:, :, inputs.criterion]
        scores = np.where(complete, mu - nu, scores)
        hesitation = np.where(complete, 1.0 - mu - nu, np.nan)
    return scores, hesitation


def _pairs(n_positions: int) -> list[tuple[int, int]]:
    return [(r, q) for r in range(n_positions) for q in range(r + 1, n_positions)]


def source_comparisons(inputs: Inputs, source: str) -> leaderboard.Comparisons:
    """The comparisons of one source (module docstring)."""
    data = inputs.data
    n_items, n_positions = data.response_ids.shape
    items, firsts, seconds, signed, hes, styles = [], [], [], [], [], []
    cluster = np.arange(n_items) if inputs.cluster is None else inputs.cluster
    if source in ("gold", "llm"):
        position = data.gold if source == "gold" else inputs.llm_preferred
        per_item = _one_hot_scores(np.asarray(position, dtype=np.int64), n_positions)[:, :, None]
        pi = np.full(per_item.shape, np.nan)
        keep = np.ones((n_items, 1), dtype=bool)
    else:
        per_item, pi = label_scores(inputs)
        keep = data.slot_present
        if source == "human_blind":
            keep = keep & inputs.slot_blind
        elif source == "human_shown":
            keep = keep & ~inputs.slot_blind
    for r, q in _pairs(n_positions):
        a, b = inputs.response_model[:, r], inputs.response_model[:, q]
        s = np.clip((per_item[:, r, :] - per_item[:, q, :]) / 2, -1.0, 1.0)
        h = (pi[:, r, :] + pi[:, q, :]) / 2
        ok = keep & ~np.isnan(s) & (a >= 0)[:, None] & (b >= 0)[:, None] & (a != b)[:, None]
        rows, cols = np.nonzero(ok)
        items.append(cluster[rows])
        if inputs.response_style is not None:
            styles.append(_normalised_difference(inputs.response_style[rows, r], inputs.response_style[rows, q]))
        firsts.append(a[rows])
        seconds.append(b[rows])
        signed.append(s[rows, cols])
        hes.append(np.nan_to_num(h[rows, cols], nan=0.0))
    if not items:
        return leaderboard.comparisons_from_signed([], [], [], [], tie_band=inputs.tie_band)
    return leaderboard.comparisons_from_signed(
        np.concatenate(items),
        np.concatenate(firsts),
        np.concatenate(seconds),
        np.concatenate(signed),
        tie_band=inputs.tie_band,
        hesitation=np.concatenate(hes),
        covariates=np.concatenate(styles) if styles else None,
    )


def _normalised_difference(a: FloatArray, b: FloatArray) -> FloatArray:
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (a - b) / np.where(total > 0, total, 1.0), 0.0)


def _interval(ci: FloatArray) -> list[float]:
    return [float(ci[0]), float(ci[1])]


def leaderboard_figures(inputs: Inputs, level: float = 0.95) -> dict[str, Any]:
    """Per source: the fitted leaderboard (strengths, mean win rates, the win-rate matrix with intervals, the
    observed matrix and counts), or why there is none."""
    out: dict[str, Any] = {}
    m = len(inputs.models)
    for source in SOURCES:
        c = source_comparisons(inputs, source)
        entry: dict[str, Any] = {"label": SOURCE_LABELS[source], "comparisons": len(c), "items": 0}
        used = np.unique(np.concatenate([c.first, c.second])) if len(c) else np.zeros(0, dtype=np.int64)
        if m < 2 or used.size < 2 or len(c) < MINIMUM_COMPARISONS:
            entry["empty"] = (
                "needs responses by at least two named models"
                if m < 2
                else f"needs {MINIMUM_COMPARISONS} comparisons between two models (has {len(c)})"
            )
            out[source] = entry
            continue
        # Fit on the models this source compares; the others stay out of its table.
        remap = -np.ones(m, dtype=np.int64)
        remap[used] = np.arange(used.size)
        local = c.regrouped(c.item, remap[c.first], remap[c.second])
        fitted = leaderboard.fit(local, int(used.size), level=level, prior=inputs.prior)
        observed, counts = leaderboard.observed_win_rates(local, int(used.size))
        names = [inputs.models[int(k)] for k in used]
        order = np.argsort(-fitted.strength, kind="stable")
        ranks = rank_intervals(fitted.strength, fitted.covariance, level=level)
        entry.update(
            items=fitted.items,
            clusters=fitted.items,
            prior=inputs.prior,
            tie=fitted.tie,
            method="Davidson (ties)" if fitted.tie > 0 else "Bradley-Terry",
            rows=[
                {
                    "rank": rank + 1,
                    "rank_ci": [int(ranks.lower[k]), int(ranks.upper[k])],
                    "model": names[k],
                    "strength": float(fitted.strength[k]),
                    "strength_ci": _interval(fitted.strength_ci[k]),
                    "win_rate": float(fitted.mean_win_rate[k]),
                    "win_rate_ci": _interval(fitted.mean_win_rate_ci[k]),
                }
                for rank, k in enumerate(order)
            ],
            style_controlled=_style_controlled(local, names, level, inputs.prior),
            matrix={
                "models": [names[k] for k in order],
                "win_rate": [[_optional(fitted.win_rate[a, b]) for b in order] for a in order],
                "win_rate_ci": [
                    [None if a == b else _interval(fitted.win_rate_ci[a, b]) for b in order] for a in order
                ],
                "observed": [[_optional(observed[a, b]) for b in order] for a in order],
                "comparisons": [[_optional(counts[a, b]) for b in order] for a in order],
            },
        )
        out[source] = entry
    return out


def _style_controlled(
    local: leaderboard.Comparisons, names: list[str], level: float, prior: float
) -> dict[str, Any] | None:
    """The fit with the answers' style differences as covariates: strengths as if every answer looked the same,
    and each style effect with its interval. None without style features, or where a feature never varies."""
    z = local.covariates
    if z is None:
        return None
    varies = np.ptp(z, axis=0) > 0
    if not varies.any():
        return None
    fitted = leaderboard.fit(local, len(names), level=level, prior=prior, covariates=z[:, varies])
    order = np.argsort(-fitted.strength, kind="stable")
    features = [f for f, kept in zip(FEATURES, varies, strict=True) if kept]
    return {
        "rows": [
            {
                "rank": rank + 1,
                "model": names[k],
                "strength": float(fitted.strength[k]),
                "strength_ci": _interval(fitted.strength_ci[k]),
            }
            for rank, k in enumerate(order)
        ],
        "effects": [
            {"feature": feature, "effect": float(fitted.style[j]), "effect_ci": _interval(fitted.style_ci[j])}
            for j, feature in enumerate(features)
        ],
    }


def _optional(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _sample_rows(inputs: Inputs) -> tuple[BoolArray, FloatArray]:
    """Items in the PPI population (two responses, a suggestion) and people's signed preferences on them (blind
    labels only; NaN elsewhere)."""
    data = inputs.data
    population = (data.n_responses == 2) & (inputs.llm_preferred != NO_SUGGESTION)
    s = np.where(inputs.slot_blind & data.slot_present, signed_preferences(data), np.nan)
    return population, s


def _within(values: FloatArray) -> FloatArray:
    """Variance of the mean of each row's labels; rows with one label borrow the pooled per-label variance."""
    m = (~np.isnan(values)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_label = np.where(m >= 2, np.nanvar(np.where(m[:, None] >= 2, values, 0.0), axis=1, ddof=1), np.nan)
    several = m >= 2
    pooled = float(np.mean(per_label[several])) if several.any() else 0.0
    return np.where(several, per_label, pooled) / np.maximum(m, 1)


def ppi_figures(inputs: Inputs, level: float = 0.95) -> dict[str, Any]:
    """Dataset-level figures by prediction-powered inference beside the human-only and LLM-only ones."""
    population, s = _sample_rows(inputs)
    band = inputs.tie_band
    labelled = population & ~np.isnan(inputs.sample_probability) & (~np.isnan(s)).any(axis=1)
    listed: list[dict[str, Any]] = []
    base: dict[str, Any] = {
        "population_items": int(population.sum()),
        "human_items": int(labelled.sum()),
        "figures": listed,
    }
    if labelled.sum() < 2:
        base["empty"] = "needs blind human labels on at least 2 items of the random sample"
        return base
    sign = preference_sign(s, band)
    llm_s = np.where(inputs.llm_preferred == 0, 1.0, np.where(inputs.llm_preferred == 1, -1.0, 0.0))
    llm_sign = llm_s
    figures: list[tuple[str, str, FloatArray, FloatArray, BoolArray]] = [
        (
            "share_first",
            "Share preferring response 1",
            np.where(np.isnan(sign), np.nan, sign == 1),
            llm_sign == 1,
            population,
        ),
        (
            "share_second",
            "Share preferring response 2",
            np.where(np.isnan(sign), np.nan, sign == -1),
            llm_sign == -1,
            population,
        ),
        (
            "share_tie",
            "Share with no preference",
            np.where(np.isnan(sign), np.nan, sign == 0),
            llm_sign == 0,
            population,
        ),
        ("mean_margin", "Mean signed preference (response 1 − response 2)", s, llm_s, population),
    ]
    models = inputs.response_model
    for a in range(len(inputs.models)):
        for b in range(a + 1, len(inputs.models)):
            orient = np.where(
                (models[:, 0] == a) & (models[:, 1] == b),
                1.0,
                np.where((models[:, 0] == b) & (models[:, 1] == a), -1.0, np.nan),
            )
            domain = population & ~np.isnan(orient)
            if not domain.any():
                continue
            credit = (1 + np.sign(sign * orient[:, None])) / 2
            llm_credit = (1 + llm_sign * orient) / 2
            name = f"{inputs.models[a]} over {inputs.models[b]}"
            figures.append((f"win_rate:{name}", f"Win rate of {name}", credit, llm_credit, domain))
    for key, label, per_label, llm_value, domain in figures:
        values = np.asarray(per_label, dtype=np.float64)
        sample = domain & labelled
        entry: dict[str, Any] = {"key": key, "label": label}
        if sample.sum() < MINIMUM_SAMPLE:
            entry["empty"] = f"needs {MINIMUM_SAMPLE} human-labelled sampled items (has {int(sample.sum())})"
            listed.append(entry)
            continue
        rows = values[sample]
        est = ppi.ppi_design(
            np.nanmean(rows, axis=1),
            np.asarray(llm_value, dtype=np.float64)[sample],
            np.asarray(llm_value, dtype=np.float64)[domain],
            inputs.sample_probability[sample],
            within_variance=_within(rows),
            level=level,
        )
        entry.update(est.as_dict())
        # A Wald interval on a handful of items can pass the figure's range; what lies outside it is impossible.
        low, high = (-1.0, 1.0) if key == "mean_margin" else (0.0, 1.0)
        for part in (entry, entry["human_only"]):
            part["ci"] = [max(part["ci"][0], low), min(part["ci"][1], high)]
        listed.append(entry)
    return base


def annotator_population_figures(inputs: Inputs, level: float = 0.95) -> dict[str, Any]:
    """Human-human pairwise agreement (ties as an answer of their own) with both intervals and what each claims."""
    data = inputs.data
    sign = preference_sign(signed_preferences(data), inputs.tie_band)
    item, first, second, agree = annotator_population.label_pairs(sign, data.slot_annotator)
    est = annotator_population.pairwise_agreement(item, first, second, agree, level)
    return {**est.as_dict(), "claims": annotator_population.sentences()}


def conclusions(inputs: Inputs, level: float = 0.95) -> dict[str, Any]:
    return {
        "models": inputs.models,
        "criterion": inputs.criterion,
        "tie_band": inputs.tie_band,
        "leaderboard": leaderboard_figures(inputs, level),
        "prediction_powered": ppi_figures(inputs, level),
        "human_agreement": annotator_population_figures(inputs, level),
        "level": level,
    }
