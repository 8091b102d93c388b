"""The delta-to-accuracy curve of MT metrics (Kocmi, Zouhar, Federmann & Post 2024): :func:`delta_to_accuracy`.

For every metric, the system pairs of every language pair are pooled; the share of pairs whose metric verdict
agrees with the humans' is modelled as a logistic function of the metric delta (maximum likelihood,
:mod:`metaeval.stats.mt.delta_accuracy`), and the delta at which it reaches 80 / 90 / 95% is read off, with a
bootstrap band (systems and segments of each language pair resampled, the draws shared by every metric).
docs/mt.md, "The delta-to-accuracy curve"; ``metaeval mt audit`` shows it beside the other measures.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import ParameterError, check_probability
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.mt.delta_accuracy import agreement_pairs, delta_for_accuracy, fit_logistic, logistic_curve
from ..stats.resampling.draws import bootstrap_draws
from ..vocabulary import check_method
from .streams import root_seed, stream

__all__ = ["DeltaAccuracyResult", "delta_to_accuracy"]


@dataclass(frozen=True)
class DeltaAccuracyResult(ResultMixin):
    """Result of :func:`delta_to_accuracy`.

    Attributes
    ----------
    metrics : tuple of str
    targets : tuple of float
        The agreement levels whose delta is reported.
    language_pairs : tuple of str
    coefficients : ndarray (P, 2)
        ``(b0, b1)`` of each metric's logistic fit ``P(agree | d) = 1 / (1 + exp(-(b0 + b1 d)))`` (NaN: no fit).
    deltas, delta_low, delta_high : ndarray (P, T)
        The delta at which the fitted agreement reaches each target, and its bootstrap band (0: reached at
        delta 0; inf: never reached).
    extrapolated : ndarray (P, T) of bool
        The delta lies beyond the largest delta observed: the curve is extrapolated there.
    pairs, agreeing, human_ties : ndarray (P,) of int
        System pairs counted (the human separates them), those the metric orders alike, pairs the human ties.
    max_delta : ndarray (P,)
    grid, curve, curve_low, curve_high : ndarray (P, G)
        The fitted agreement on a grid of deltas from 0 to the largest observed, with its band.
    bins : list of dict
        Empirical agreement in quantile bins of the delta (the dots of the figure): metric, low, high, mean
        delta, pairs, agreement.
    n_dropped : ndarray (P,) of int
        Resamples with no fit (separated outcomes), left out of the bands.
    method : str
        What the bootstrap resamples in each language pair (``'systems'`` where it has one segment).
    n_resamples : int
    confidence_level : float
    notes : tuple of str
    signature : Signature
    """

    metrics: tuple[str, ...]
    targets: tuple[float, ...]
    language_pairs: tuple[str, ...]
    coefficients: np.ndarray
    deltas: np.ndarray
    delta_low: np.ndarray
    delta_high: np.ndarray
    extrapolated: np.ndarray
    pairs: np.ndarray
    agreeing: np.ndarray
    human_ties: np.ndarray
    max_delta: np.ndarray
    grid: np.ndarray = field(repr=False, metadata={"serialize": "exclude"})
    curve: np.ndarray = field(repr=False, metadata={"serialize": "exclude"})
    curve_low: np.ndarray = field(repr=False, metadata={"serialize": "exclude"})
    curve_high: np.ndarray = field(repr=False, metadata={"serialize": "exclude"})
    bins: list = field(default_factory=list)
    n_dropped: np.ndarray | None = None
    method: str = defaults.DELTA_ACCURACY_METHOD
    n_resamples: int = 0
    confidence_level: float = defaults.CONFIDENCE_LEVEL
    notes: tuple[str, ...] = ()
    signature: Signature | None = None

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per metric and target."""
        rows = []
        for i, m in enumerate(self.metrics):
            for t, target in enumerate(self.targets):
                rows.append({"metric": m, "target": target, "delta": float(self.deltas[i, t]),
                             "delta_low": float(self.delta_low[i, t]), "delta_high": float(self.delta_high[i, t]),
                             "extrapolated": bool(self.extrapolated[i, t]), "pairs": int(self.pairs[i]),
                             "agreement": float(self.agreeing[i] / self.pairs[i]) if self.pairs[i] else float("nan"),
                             "b0": float(self.coefficients[i, 0]), "b1": float(self.coefficients[i, 1]),
                             "dropped": int(self.n_dropped[i]) if self.n_dropped is not None else 0})
        return rows

    def table_frame(self):
        """One row per metric: the observed agreement, and per target ``delta [low, high]`` (``>`` marks an
        extrapolation, ``never`` a curve that does not reach the target), the terminal table."""
        import pandas as pd

        def shown(v, digits=3):
            return "never" if v == np.inf else ("n/a" if not np.isfinite(v) else f"{v:.{digits}g}")

        out = []
        for i, m in enumerate(self.metrics):
            row = {"metric": m, "agree": f"{self.agreeing[i] / self.pairs[i]:.3f}" if self.pairs[i] else "n/a"}
            for t, target in enumerate(self.targets):
                mark = ">" if self.extrapolated[i, t] else ""
                row[f"delta@{target:.0%}"] = (f"{mark}{shown(self.deltas[i, t])} [{shown(self.delta_low[i, t], 2)}, "
                                              f"{shown(self.delta_high[i, t], 2)}]" if np.isfinite(self.deltas[i, t])
                                              or self.deltas[i, t] == np.inf else "n/a")
            out.append(row)
        return pd.DataFrame(out)


def check_targets(targets) -> tuple[float, ...]:
    if isinstance(targets, (int, float)):
        targets = (targets,)
    out = tuple(check_probability("targets", t) for t in targets)
    if not out:
        raise ParameterError("`targets` must hold at least one agreement level in (0, 1); got none.")
    return out


def check_resampling(data: Mapping[str, ScoreSet], method: str) -> str:
    """``method`` checked, and possible for every language pair of ``data``: 'inputs' needs two segments."""
    method = check_method(method)
    if method == "inputs":
        for lp, ds in data.items():
            if len(ds.inputs) == 1:
                raise ParameterError(f"`method` 'inputs' cannot resample language pair {lp!r}: it has 1 segment; "
                                     f"use 'systems' or 'both'.")
    return method


def _order_interval(samples: np.ndarray, confidence_level: float) -> tuple[float, float]:
    """The ``alpha/2`` and ``1 - alpha/2`` order statistics of the non-NaN ``samples`` (inf kept: a curve
    that never reaches the target); NaN, NaN if there are none."""
    s = samples[~np.isnan(samples)]
    if s.size == 0:
        return float("nan"), float("nan")
    a = 1.0 - confidence_level
    return (float(np.percentile(s, 100 * a / 2, method="lower")),
            float(np.percentile(s, 100 * (1 - a / 2), method="higher")))


def _prepare(data, metrics, human, exclude_systems):
    """Per language pair: (kept system names, metric matrices (P, N, M), human matrix (N, M)) on the segments
    every kept system has every metric's and the human's score; and the gold of each language pair."""
    from ..stats.mt.protocol import PROTOCOLS
    from .checks import _golds, exclusions, language_pair_data
    from .tasks import segments_kept

    data = language_pair_data(data)
    golds = _golds(data, human, PROTOCOLS["mean"])
    first = next(iter(data.values()))
    if metrics is None:
        metrics = [s for s in first.scorers if s not in first.humans and s not in set(golds.values())]
    metrics = tuple([metrics] if isinstance(metrics, str) else metrics)
    if not metrics:
        raise ParameterError("`metrics` must name at least one metric; got none.")
    gone = exclusions(exclude_systems, {lp: ds.systems for lp, ds in data.items()}, "exclude_systems")
    prepared, notes = {}, []
    for lp, ds in data.items():
        for m in metrics:
            ds.require(m, param="metrics")
            if m == golds[lp]:
                raise ParameterError(f"`metrics` must not contain the gold of language pair {lp!r}; got {m!r}.")
        keep = [s for s in ds.systems if s not in gone[lp]]
        if len(keep) < 2:
            raise ParameterError(f"language pair {lp!r} must keep at least 2 systems for a system pair; got "
                                 f"{len(keep)}.")
        ds = ds.subset(systems=keep) if len(keep) < len(ds.systems) else ds
        cols = segments_kept(ds, metrics, golds[lp], {}, np.ones(len(keep), dtype=bool))
        if not cols.any():
            raise ParameterError(f"language pair {lp!r} must have a segment every system, metric and the human "
                                 f"scored; got none.")
        if (~cols).sum():
            notes.append(f"{lp}: {int((~cols).sum())} of {cols.size} segments left out (some system, metric or "
                         f"the human has no score)")
        prepared[lp] = (np.stack([ds.matrix(m)[:, cols] for m in metrics]), ds.matrix(golds[lp])[:, cols])
    return metrics, golds, prepared, notes


def _resampled_pairs(xs, z, method, k, gen):
    """Pairs of ``k`` bootstrap resamples of one language pair: ``(d (P, k, n), y (P, k, n), w (k, n))``."""
    p, n, m = xs.shape
    draws = bootstrap_draws(n, m, method=method, n_resamples=k, rng=gen)
    cw = draws.col_weights().astype(float)  # (k, M)
    rows = draws.row_indices()  # (k, N)
    zres = np.take_along_axis((cw @ z.T) / cw.sum(axis=1)[:, None], rows, axis=1)
    xres = np.stack([np.take_along_axis((cw @ xs[i].T) / cw.sum(axis=1)[:, None], rows, axis=1) for i in range(p)])
    d, y, counted = agreement_pairs(xres, zres[None])
    return d, y, counted[0]


def delta_to_accuracy(
    data: ScoreSet | Mapping[str, ScoreSet],
    metrics: list[str] | None = None,
    human: str | Mapping[str, str] | None = None,
    *,
    targets: tuple[float, ...] = defaults.DELTA_ACCURACY_TARGETS,
    method: str = defaults.DELTA_ACCURACY_METHOD,
    exclude_systems: list[str] = (),
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    rng: Any = None,
) -> DeltaAccuracyResult:
    """The metric delta at which a system pair's metric verdict agrees with the humans' X% of the time.

    Named ``delta_accuracy`` until 0.1 (that name warns for one release). Not to be confused with
    :func:`metaeval.delta_correlations`, which returns the correlation of the system pairs whose metric delta
    lies in a band; this returns the deltas themselves, the delta-to-accuracy curve of Kocmi et al. (2024).

    Parameters
    ----------
    data : ScoreSet or mapping of str to ScoreSet
        One ScoreSet per language pair, as for :func:`metaeval.mt_evaluate`; system-level data (one segment)
        is fine.
    metrics : list of str, optional
        Default: every non-human scorer of the first language pair.
    human : str or mapping, optional
        The gold, as for :func:`metaeval.mt_evaluate`.
    targets : tuple of float
        Agreement levels in (0, 1) whose delta is reported.
    method : {'both', 'systems', 'inputs'}
        What the bootstrap of the band resamples within each language pair; a language pair with one segment
        resamples its systems only under 'both' (and 'inputs' is an error there).
    exclude_systems : list of str
        ``'SYSTEM'`` or ``'LP=SYSTEM'``, as for :func:`metaeval.mt_evaluate`.
    n_resamples : int
        Bootstrap resamples; the draws are shared by every metric.
    confidence_level : float
    rng : None, int or numpy.random.Generator

    Returns
    -------
    DeltaAccuracyResult

    Notes
    -----
    System scores are the means over the segments every kept system, metric and the human scored. For every
    pair of systems of a language pair, ``d = |x_a - x_b|`` and the verdict agrees when the metric orders the
    pair as the humans do (a metric tie disagrees; pairs the humans tie are left out and counted), as in
    system-level pairwise accuracy (Kocmi et al. 2021). The pairs of all language pairs are pooled (the
    metric's scale is assumed the same across language pairs, as Kocmi et al. 2024 do), and
    ``P(agree | d) = 1 / (1 + exp(-(b0 + b1 d)))`` is fitted by maximum likelihood. The delta for target
    ``X`` is ``(logit(X) - b0) / b1``. Kocmi et al. fit a sigmoid scaled by a ceiling to binned accuracies;
    the two-parameter logistic is fitted to the pairs themselves (no bins to choose), has a concave
    likelihood with a unique maximum whenever one exists, and its curve can start below or above one half.
    When the outcomes are separated by the delta (say every pair agrees) no maximum exists: the fit is NaN
    and the notes say so. Band: the percentile (order statistics) interval over bootstrap resamples of each
    language pair's systems (rows) and segments (columns), the pairs recomputed and the curve refitted;
    resamples with separated outcomes are left out and counted in ``n_dropped``.

    References
    ----------
    Kocmi, T., Zouhar, V., Federmann, C. and Post, M. (2024). Navigating the Metrics Maze: Reconciling Score
    Magnitudes and Accuracies. ACL 2024.
    Kocmi, T., Federmann, C., Grundkiewicz, R., Junczys-Dowmunt, M., Matsushita, H. and Menezes, A. (2021).
    To Ship or Not to Ship: An Extensive Evaluation of Automatic Metrics for Machine Translation. WMT 2021.
    """
    from .checks import language_pair_data

    targets = check_targets(targets)
    data = language_pair_data(data)
    method = check_resampling(data, method)
    k = iv.check_n_resamples(n_resamples)
    level = iv.check_confidence_level(confidence_level)
    seed = root_seed(rng)  # one stream per language pair (metaeval.mt.streams)
    metrics, golds, prepared, notes = _prepare(data, metrics, human, exclude_systems)
    p = len(metrics)
    ds_, ys_, ws_, rd, ry, rw, methods = [], [], [], [], [], [], set()
    for lp, (xs, z) in prepared.items():
        d, y, counted = agreement_pairs(xs.mean(axis=-1), z.mean(axis=-1)[None])
        ds_.append(d)
        ys_.append(y)
        ws_.append(np.broadcast_to(counted, d.shape))
        lp_method = "systems" if xs.shape[2] == 1 else method  # 'inputs' there: refused by check_resampling
        methods.add(lp_method)
        d, y, w = _resampled_pairs(xs, z, lp_method, k, stream(seed, "delta-accuracy", lp))
        rd.append(d)
        ry.append(y)
        rw.append(w)
    d, y, w = np.concatenate(ds_, -1), np.concatenate(ys_, -1), np.concatenate(ws_, -1).astype(float)
    b0, b1 = fit_logistic(d, y, w)
    counted = w > 0
    pairs, agreeing = counted.sum(-1), (counted & (y > 0.5)).sum(-1)
    ties = np.full(p, d.shape[-1]) - pairs
    max_delta = np.where(counted, d, 0.0).max(axis=-1)
    rw_all = np.concatenate(rw, -1).astype(float)
    t_count = len(targets)
    deltas = np.stack([delta_for_accuracy(b0, b1, t) for t in targets], axis=1)
    low, high = np.full((p, t_count), np.nan), np.full((p, t_count), np.nan)
    grid_n = defaults.DELTA_ACCURACY_GRID
    grid = np.linspace(0.0, 1.0, grid_n)[None] * max_delta[:, None]
    curve = logistic_curve(b0, b1, grid)
    curve_low, curve_high = np.full((p, grid_n), np.nan), np.full((p, grid_n), np.nan)
    dropped = np.zeros(p, dtype=int)
    a = 1.0 - level
    for i in range(p):
        rb0, rb1 = fit_logistic(np.concatenate([r[i] for r in rd], -1), np.concatenate([r[i] for r in ry], -1),
                                rw_all)
        dropped[i] = int(np.isnan(rb0).sum())
        for t, target in enumerate(targets):
            low[i, t], high[i, t] = _order_interval(delta_for_accuracy(rb0, rb1, target), level)
        ok = ~np.isnan(rb0)
        if ok.any():
            curves = logistic_curve(rb0[ok], rb1[ok], grid[i])
            curve_low[i], curve_high[i] = np.percentile(curves, [100 * a / 2, 100 * (1 - a / 2)], axis=0)
        if np.isnan(b0[i]):
            notes.append(f"{metrics[i]}: no logistic fit: the agreement is separated by the delta ({agreeing[i]} of "
                         f"{pairs[i]} pairs agree{'' if agreeing[i] in (0, pairs[i]) else ', all above some delta'})")
    if dropped.any():
        notes.append(f"resamples of {k} with separated outcomes (no fit), left out of the bands: "
                     + ", ".join(f"{m} {n}" for m, n in zip(metrics, dropped) if n))
    if ties.any():
        notes.append(f"system pairs the humans tie, left out: {int(ties[0])}")
    extrapolated = np.isfinite(deltas) & (deltas > max_delta[:, None])
    bins = _bins(metrics, d, y, counted)
    signature = Signature.of(language_pairs=tuple(prepared), metrics=p, human=",".join(dict.fromkeys(golds.values())),
                             fit="logistic-ml", targets=targets, method="+".join(sorted(methods)), resamples=k,
                             confidence=level, seed=seed)
    return DeltaAccuracyResult(metrics, targets, tuple(prepared), np.stack([b0, b1], axis=1), deltas, low, high,
                               extrapolated, pairs, agreeing, ties, max_delta, grid, curve, curve_low, curve_high,
                               bins, dropped, "+".join(sorted(methods)), k, level, tuple(notes), signature)


def _bins(metrics, d, y, counted):
    """Empirical agreement in ``DELTA_ACCURACY_BINS`` quantile bins of each metric's delta (counted pairs)."""
    out = []
    for i, m in enumerate(metrics):
        di, yi = d[i][counted[i]], y[i][counted[i]]
        if di.size == 0:
            continue
        edges = np.unique(np.quantile(di, np.linspace(0, 1, defaults.DELTA_ACCURACY_BINS + 1)))
        which = np.clip(np.searchsorted(edges, di, side="right") - 1, 0, max(len(edges) - 2, 0))
        for b in range(max(len(edges) - 1, 1)):
            sel = which == b
            if sel.any():
                out.append({"metric": m, "low": float(edges[b]), "high": float(edges[min(b + 1, len(edges) - 1)]),
                            "mean_delta": float(di[sel].mean()), "pairs": int(sel.sum()),
                            "agreement": float(yi[sel].mean())})
    return out
