"""The protocol audit: sentinel metrics across a grid of tasks, and the measures judged (:func:`mt_audit`).

Every task of a grid (groupings none / item / system, and system scores, x statistics) is computed by
:func:`metaeval.mt.evaluate.mt_evaluate` for the real metrics and the sentinels of
:mod:`metaeval.mt.sentinels` together, with its permutation tests and significance clusters. For
each task the audit reports where each sentinel ranks among the real metrics (Perrella et al. 2024) and
judges the task as a measure (Gao et al. 2025): its discriminative power (the share of real-metric pairs
significantly different) and its ranking consistency (Kendall tau-b between the ranking of the real metrics on
all segments and on random halves of the segments). docs/mt.md, "Auditing the protocol".
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import ParameterError
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.correlations.coefficients import correlation_rows
from ..stats.mt.protocol import GROUPING
from .checks import _waves, exclusions
from .evaluate import mt_evaluate
from .result import POOLED
from .sentinels import add_sentinels
from .streams import root_seed, stream
from .tasks import Draws, TaskSettings, by_subset, language_pair, make_task, segments_kept, subsample_statistics

__all__ = ["MtAuditResult", "consistency_note", "mt_audit", "wilson_interval"]


def wilson_interval(successes: int, n: int, alpha: float) -> tuple[float, float]:
    """Wilson's score interval of a binomial proportion (Wilson 1927) at level ``1 - alpha``."""
    from scipy.stats import norm

    if n == 0:
        return float("nan"), float("nan")
    z = float(norm.ppf(1 - alpha / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the ends (no rounding past p)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return float(low), float(high)


def discriminative_power(pvalues: np.ndarray, alpha: float) -> tuple[int, int]:
    """``(significant pairs, pairs)`` among the metrics of a (P, P) matrix of one-sided p-values "row beats
    column": a pair is significantly different when either direction is below ``alpha`` (the rule of the
    significance clusters). Pairs with a NaN p-value in both directions are not counted."""
    p = pvalues.shape[0]
    sig = n = 0
    for i in range(p):
        for j in range(i + 1, p):
            a, b = pvalues[i, j], pvalues[j, i]
            if np.isnan(a) and np.isnan(b):
                continue
            n += 1
            sig += bool(min(np.nan_to_num(a, nan=1.0), np.nan_to_num(b, nan=1.0)) < alpha)
    return sig, n


@dataclass(frozen=True)
class MtAuditResult(ResultMixin):
    """Result of :func:`mt_audit`.

    Attributes
    ----------
    metrics, sentinels : tuple of str
        The real metrics and the sentinels added.
    tasks : tuple of str
        ``'lp:level/statistic'`` (and ``'pooled:system/accuracy'``), as in :class:`MtEvaluationResult`.
    statistics : ndarray (T, P + S)
        Each task's statistic of each real metric, then each sentinel.
    rows : list of dict
        One row per task and scorer: the statistic, its position among the real metrics (1 = above all of
        them), the cluster rank, and how many real metrics it significantly beats / is beaten by.
    measures : list of dict
        One row per task: discriminative power with its Wilson interval, ranking consistency (mean Kendall
        tau-b) with its 2.5-97.5 percentile interval over the subsamples.
    notes : tuple of str
    n_resamples, n_consistency : int
    alpha : float
    signature : Signature
    delta_accuracy : DeltaAccuracyResult or None
        The delta-to-accuracy curve of every real metric (:func:`metaeval.delta_accuracy`), None when skipped.
    """

    metrics: tuple[str, ...]
    sentinels: tuple[str, ...]
    tasks: tuple[str, ...]
    statistics: np.ndarray
    rows: list = field(default_factory=list)
    measures: list = field(default_factory=list)
    notes: tuple[str, ...] = ()
    n_resamples: int = 0
    n_consistency: int = 0
    alpha: float = defaults.ALPHA
    signature: Signature | None = None
    delta_accuracy: Any = None

    def frame_rows(self) -> list[dict[str, Any]]:
        return list(self.rows)

    def measures_frame(self):
        """The measures (one row per task) as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.measures)

    def sentinel_frame(self):
        """One row per task, one column per sentinel: ``position/metrics`` (``*`` when it significantly beats
        some real metric), the terminal table of ``metaeval mt audit``."""
        import pandas as pd

        out = []
        for task in self.tasks:
            row = {"task": task}
            for r in self.rows:
                if r["task"] == task and r["kind"] in ("sentinel", "baseline"):
                    name = r["scorer"] + (" (human)" if r["kind"] == "baseline" else "")
                    row[name] = (f"{r['position']}/{len(self.metrics) + 1}" + ("*" if r["beats"] else "")
                                 if r["position"] > 0 else "undefined")
            out.append(row)
        return pd.DataFrame(out)


def _data_iv(data):
    from .checks import language_pair_data

    return language_pair_data(data)


def _audit_fields(protocol, baselines, rater_waves, rtol):
    """The signature fields of a non-default audit: the protocol (name and content hash), human baselines, rater
    waves, the tie tolerance."""
    out = {}
    if protocol.name != "mean" or protocol != _mean_protocol(protocol):
        from .protocol import protocol_hash

        out.update(protocol=protocol.name, protocol_hash=protocol_hash(protocol))
    if baselines:
        out["human_baselines"] = baselines
    if rater_waves is not None:
        out["rater_waves"] = rater_waves
    out.update(iv.tie_field(rtol))
    return out


def _mean_protocol(protocol):
    """The ``'mean'`` preset with ``protocol``'s tasks (the audit's default, whatever its grid)."""
    from ..stats.mt.protocol import PROTOCOLS

    return PROTOCOLS["mean"].replace_tasks(tuple(t.name for t in protocol.tasks))


def _metrics(first, metrics, human, baselines=(), param="metrics"):
    golds = set(human.values()) if isinstance(human, Mapping) else {human}
    if metrics is None:
        metrics = [s for s in first.scorers if s not in first.humans and s not in golds and s not in baselines]
    metrics = list(metrics)
    if len(metrics) < 2:
        raise ParameterError(f"`{param}` must hold at least 2 real metrics to rank the sentinels among; got "
                             f"{len(metrics)}" + (f" ({', '.join(map(repr, metrics))})." if metrics else "."))
    return metrics


def _sentinel_rows(res, metrics, sentinels, alpha, n_sentinels=None):
    """Rows per task and scorer, and the measures per task; ``sentinels`` may end with human baselines (rows of
    kind ``'baseline'``: the scorers after the first ``n_sentinels``)."""
    p = len(metrics)
    n_sentinels = len(sentinels) if n_sentinels is None else n_sentinels
    rows, measures = [], []
    for t, task in enumerate(res.tasks):
        stats, pv, ranks = res.statistics[t], res.task_pvalues[task], res.task_ranks[task]
        level_stat = task.split(":", 1)[1]
        level, stat = level_stat.split("/")
        for i, name in enumerate((*metrics, *sentinels)):
            real = [j for j in range(p) if j != i]
            undefined = not np.isfinite(stats[i])
            rows.append({"task": task, "grouping": GROUPING[level], "statistic_name": stat, "scorer": name,
                         "kind": "metric" if i < p else "sentinel" if i < p + n_sentinels else "baseline",
                         "statistic": float(stats[i]),
                         "position": 0 if undefined else 1 + int(sum(stats[j] > stats[i] for j in real)),
                         "cluster": int(ranks[i]),
                         "beats": int(sum(pv[i, j] < alpha for j in real)),
                         "beaten_by": int(sum(pv[j, i] < alpha for j in real))})
        sig, n = discriminative_power(pv[:p, :p], alpha)
        low, high = wilson_interval(sig, n, alpha)
        measures.append({"task": task, "grouping": GROUPING[level], "statistic_name": stat,
                         "discriminative_power": sig / n if n else float("nan"), "dp_low": low, "dp_high": high,
                         "pairs": n})
    return rows, measures


def _consistency(data, res, metrics, excluded, b, fraction, seed, alpha, progress, human_ties="skip",
                 rtol=defaults.TIE_TOLERANCE):
    """Per task of a language pair: (mean tau-b, low, high) between the full-data ranking of the real metrics
    and their ranking on ``b`` subsamples of a ``fraction`` of the segments (without replacement): the subsets
    from the stream ``('audit', lp, 'consistency')``, a task's own draws (SPA's signs) from
    ``('audit', lp, 'consistency', task)``."""
    per_lp = exclusions(excluded, {lp: ds.systems for lp, ds in data.items()}, "exclude_systems")
    out = {}
    settings = TaskSettings(recalibrate=False, spa_permutations=defaults.MT_SPA_PERMUTATIONS, pvalue="randomized",
                            human_ties=human_ties, darr_threshold=defaults.MT_DARR_THRESHOLD, rtol=rtol)
    observed_only = Draws(permute=True, k=0, gen=None, keep=False, root=seed)
    for lp, ds in data.items():
        human = res.gold[lp]
        gone = per_lp[lp] | set(res.systems_dropped.get(lp, {}))
        keep = [s for s in ds.systems if s not in gone]
        ds = ds.subset(systems=keep) if len(keep) < len(ds.systems) else ds
        cols = np.flatnonzero(segments_kept(ds, metrics, human, {}, np.ones(len(keep), dtype=bool)))
        size = max(2, int(round(fraction * cols.size)))
        taus = {name: [] for name in res.tasks if name.startswith(lp + ":")}
        if cols.size < 4:  # no half of the segments to draw (system-level scores: one input per language pair)
            out.update({name: (float("nan"),) * 3 + (0,) for name in taus})
            out["short"] = (*out.get("short", ()), lp)
            continue
        full = {name: res.statistics[res.tasks.index(name), :len(metrics)] for name in taus}
        kept = np.zeros(len(ds.inputs), dtype=bool)
        kept[cols] = True
        whole = language_pair(ds, metrics, human, {}, {}, kept)
        subsets, stats = [], {name: [] for name in taus}
        gen = stream(seed, "audit", lp, "consistency")
        own = {name: observed_only.keyed("audit", lp, "consistency", name.split(":", 1)[1]) for name in taus}
        for _ in range(b):  # the subsets; each task's own draws (SPA's signs) from its stream, subset by subset
            mask = np.zeros(len(ds.inputs), dtype=bool)
            mask[gen.choice(cols, size=size, replace=False)] = True
            subsets.append(mask[kept])
            lpd = None
            for name in taus:
                level, stat = name.split(":", 1)[1].split("/")
                if by_subset(level, stat):
                    lpd = lpd or language_pair(ds, metrics, human, {}, {}, mask)
                    stats[name].append(make_task(level, stat, settings).run(lpd, own[name]).observed)
            if progress is not None:
                progress()
        for name in taus:
            level, stat = name.split(":", 1)[1].split("/")
            at_once = None if stats[name] else subsample_statistics(
                whole, level, stat, np.stack(subsets), human_ties=human_ties,
                darr_threshold=defaults.MT_DARR_THRESHOLD, rtol=settings.rtol)
            for o in (stats[name] if at_once is None else at_once):
                o = np.asarray(o, dtype=float)
                if np.isfinite(o).all():
                    taus[name].append(correlation_rows(full[name][None], o[None], "kendall-b")[0])
        for name, values in taus.items():
            v = np.asarray(values, dtype=float)
            v = v[np.isfinite(v)]
            out[name] = ((float(v.mean()), float(np.percentile(v, 100 * alpha / 2)),
                          float(np.percentile(v, 100 * (1 - alpha / 2))), int(v.size)) if v.size
                         else (float("nan"),) * 3 + (0,))
    return out


def consistency_note(task: str, mean: float, low: float, high: float, alpha: float) -> str | None:
    """The one-line explanation of a ranking-consistency mean outside its own percentile interval (issue 41 item
    4), else None: the subsamples' tau-b are skewed - most at one value (often 1.0: the same ranking) and a few far
    from it - so the few pull the mean while the ``alpha/2`` and ``1 - alpha/2`` percentiles leave them out."""
    slack = 1e-12 * (1 + abs(mean))  # the mean of equal values may differ from them in the last bits
    if not (np.isfinite(mean) and np.isfinite(low) and np.isfinite(high)) or low - slack <= mean <= high + slack:
        return None
    side = "below" if mean < low else "above"
    return (f"{task}: ranking consistency {mean:.3f} is {side} its {100 * (1 - alpha):g}% interval [{low:.3f}, "
            f"{high:.3f}]: a few subsamples far from the rest move the mean, which the percentiles leave out"
            " (the subsamples' tau-b are skewed)")


def mt_audit(
    data: ScoreSet | Mapping[str, ScoreSet],
    metrics: list[str] | None = None,
    human: str | Mapping[str, str] | None = None,
    *,
    tasks: list[str] | None = None,
    base: str | None = None,
    levels: int = defaults.MT_SENTINEL_LEVELS,
    candidates: Mapping | None = None,
    exclude_systems: list[str] = (),
    n_resamples: int = defaults.N_RESAMPLES,
    n_consistency: int = defaults.MT_CONSISTENCY_RESAMPLES,
    alpha: float = defaults.ALPHA,
    rng: Any = None,
    progress: Any = None,
    accuracy_targets: tuple[float, ...] = defaults.DELTA_ACCURACY_TARGETS,
    delta_method: str = defaults.DELTA_ACCURACY_METHOD,
    protocol: Any = None,
    human_baselines: tuple[str, ...] = (),
    rater_waves: int | None = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
    params: Mapping[str, str] | None = None,
) -> MtAuditResult:
    """Audit a grid of MT meta-evaluation tasks with sentinel metrics, and judge each task as a measure.

    Parameters
    ----------
    data : ScoreSet or mapping of str to ScoreSet
        One ScoreSet per language pair, as for :func:`metaeval.mt_evaluate`.
    metrics : list of str, optional
        The real metrics (at least 2; default: every non-human scorer of the first language pair).
    human : str or mapping, optional
        The gold, as for :func:`metaeval.mt_evaluate`.
    tasks : list of str, optional
        ``'level/statistic'`` tasks (default :data:`metaeval.defaults.MT_AUDIT_TASKS`).
    base : str, optional
        The metric the system-mean and rounded sentinels copy (default: the first metric).
    levels : int
        Distinct values of the rounded sentinel.
    candidates : mapping, optional
        ``{lp: {(system, input): text}}`` (or one such mapping for one language pair): adds the length sentinel.
    exclude_systems : list of str
        As for :func:`metaeval.mt_evaluate`.
    n_resamples : int
        Permutation draws of each task's tests.
    n_consistency : int
        Subsamples (half of the segments, without replacement) of the ranking consistency; 0 skips it.
    alpha : float
        Significance level of the clusters, of "significantly beats" and of the discriminative power;
        the intervals are at level ``1 - alpha``.
    rng : None, int or numpy.random.Generator
    progress : callable, optional
    accuracy_targets : tuple of float
        Agreement levels of the delta-to-accuracy curve (:func:`metaeval.delta_accuracy`, ``n_resamples``
        bootstrap resamples, band at level ``1 - alpha``); empty skips the curve.
    delta_method : {'both', 'systems', 'inputs'}
        What the curve's bootstrap resamples.
    protocol : str or Protocol, optional
        The protocol audited (a preset name, a TOML file or a :class:`~metaeval.stats.mt.protocol.Protocol`):
        its tasks (unless ``tasks`` is given), test, human-tie rule, p-values and gold. Default: the grid
        :data:`metaeval.defaults.MT_AUDIT_TASKS` under the plain ``'mean'`` protocol.
    human_baselines : list of str
        Human scorers other than the gold ranked with the metrics and sentinels (rows of kind ``'baseline'``;
        as for :func:`metaeval.mt_evaluate`).
    rater_waves : int, optional
        Split each segment's raters into waves first, as :func:`metaeval.mt_evaluate` does (needs an integer
        ``rng``); a wave can then be the gold or a baseline.
    tie_tolerance : float
        The relative tie tolerance of every rank statistic, as for :func:`metaeval.mt_evaluate`.
    params : mapping of str to str, optional
        The names errors give to the parameters, as for :func:`metaeval.mt_evaluate`.

    Returns
    -------
    MtAuditResult

    Notes
    -----
    The tasks run under the ``'mean'`` protocol (plain statistics, randomized p-values, human-tied system
    pairs skipped) with the permutation test of :func:`metaeval.mt_evaluate`; a sentinel "significantly
    beats" a real metric when its one-sided p-value is below ``alpha``. Discriminative power (Gao et al.
    2025): the share of pairs of real metrics whose p-value in either direction is below ``alpha``, with
    Wilson's interval (which treats the pairs as independent, though pairs share metrics: a guide, not a
    test). Ranking consistency: mean Kendall tau-b between the real metrics' statistics on all segments
    and on each subsample of half of the segments; interval: the ``alpha/2`` and ``1 - alpha/2``
    percentiles of the subsamples' tau-b.

    References
    ----------
    Perrella, S., Proietti, L., Scire, A., Barba, E. and Navigli, R. (2024). Guardians of the Machine
    Translation Meta-Evaluation: Sentinel Metrics Fall In! ACL 2024.
    Gao, M., Hu, X., Lin, L. and Wan, X. (2025). Analyzing and Evaluating Correlation Measures in NLG
    Meta-Evaluation. NAACL 2025.
    """
    from .checks import _golds, _names, resolve_protocol

    names = _names(params)
    data = _data_iv(data)
    seed = root_seed(rng)  # every stream keyed by what it serves (metaeval.mt.streams)
    if rater_waves is not None:
        data = _waves(data, rater_waves, seed, names["rater_waves"])
    baselines = (human_baselines,) if isinstance(human_baselines, str) else tuple(human_baselines)
    first = next(iter(data.values()))
    metrics = _metrics(first, metrics, human, baselines, names["metrics"])
    b = iv.check_int("n_consistency", n_consistency, minimum=0)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    if protocol is None:
        protocol, tasks = "mean", list(tasks or defaults.MT_AUDIT_TASKS)
    protocol = resolve_protocol(protocol, tasks)
    for lp, gold in _golds(data, human, protocol, names["human"]).items():  # before the sentinels flatten the data
        iv.check_gold_aggregation(data[lp], gold, param=names["aggregation"], language_pair=lp)
    if accuracy_targets:
        from .delta import check_resampling, check_targets

        accuracy_targets, delta_method = check_targets(accuracy_targets), check_resampling(data, delta_method)
    if candidates is not None and len(data) == 1 and not all(isinstance(v, Mapping) for v in candidates.values()):
        candidates = {next(iter(data)): candidates}
    augmented, notes = {}, []
    without = [lp for lp in data if candidates is not None and candidates.get(lp) is None]
    if candidates is not None and without:  # the length sentinel needs the texts of every language pair
        notes.append(f"sentinel-length left out: no candidate texts for {', '.join(map(repr, without))} (the"
                     " sentinels are ranked in every language pair; give the candidates of each)")
        candidates = {}
    for lp, ds in data.items():
        texts = None if candidates is None else candidates.get(lp)
        augmented[lp], lp_notes = add_sentinels(ds, metrics, base=base, levels=levels, candidates=texts,
                                                rng=stream(seed, "audit", lp, "sentinels"))
        notes += [f"{lp}: {n}" for n in lp_notes if not (without and n.startswith("sentinel-length"))]
    sentinels = tuple(s for s in augmented[next(iter(augmented))].scorers if s.startswith("sentinel-"))
    res = mt_evaluate(augmented, [*metrics, *sentinels], human, protocol=protocol, exclude_systems=exclude_systems,
                      human_baselines=baselines, n_resamples=n_resamples, alpha=alpha, rng=seed, progress=progress,
                      tie_tolerance=rtol, params=params)
    rows, measures = _sentinel_rows(res, metrics, (*sentinels, *baselines), alpha, len(sentinels))
    consistency = _consistency(data, res, metrics, exclude_systems, b, defaults.MT_CONSISTENCY_FRACTION, seed,
                               alpha, None, protocol.human_ties, rtol) if b else {}
    for m in measures:
        mean, low, high, used = consistency.get(m["task"], (float("nan"),) * 3 + (0,))
        m.update(consistency=mean, cons_low=low, cons_high=high, subsamples=used)
        outside = consistency_note(m["task"], mean, low, high, alpha)
        if outside:
            notes.append(outside)
    if b and any(t.startswith(POOLED + ":") for t in res.tasks):
        notes.append("pooled:system/accuracy: no ranking consistency (the subsamples are per language pair)")
    short = consistency.pop("short", ())
    if short:
        notes.append(f"{', '.join(short)}: no ranking consistency (fewer than 4 segments: no random halves to draw)")
    notes += res.notes()
    curve = None
    if accuracy_targets:
        from .delta import delta_to_accuracy

        curve = delta_to_accuracy(data, metrics, res.gold, targets=tuple(accuracy_targets), method=delta_method,
                               exclude_systems=exclude_systems, n_resamples=n_resamples, confidence_level=1 - alpha,
                               rng=seed)
        notes += [f"delta-to-accuracy: {n}" for n in curve.notes]
    signature = Signature.of(language_pairs=tuple(data), metrics=tuple(metrics), sentinels=sentinels,
                             human=",".join(dict.fromkeys(res.gold.values())),
                             **({"exclude_systems": res.signature.as_dict()["exclude_systems"]}
                                if res.signature.as_dict().get("exclude_systems") else {}),
                             tasks=tuple(dict.fromkeys(t.split(":", 1)[1] for t in res.tasks  # once, not per pair
                                                       if not t.startswith(POOLED))),
                             significance="perm-both", resamples=res.n_resamples, alpha=alpha,
                             consistency=f"{b} x half" if b else None, base=base or metrics[0], levels=levels,
                             delta_accuracy=(",".join(f"{t:g}" for t in accuracy_targets) + f" {delta_method}"
                                             if accuracy_targets else None), seed=seed,
                             **_audit_fields(protocol, baselines, rater_waves, rtol))
    return MtAuditResult(tuple(metrics), sentinels, res.tasks, res.statistics, rows, measures, tuple(notes),
                         res.n_resamples, b, alpha, signature, curve)
