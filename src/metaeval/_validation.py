"""Input validation shared by the public functions: check and canonicalize once, then compute."""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from . import defaults, vocabulary
from .data.scoreset import DEFAULT_AGGREGATION, ScoreSet
from .errors import (
    DataWarning,
    DegenerateDataError,
    DegenerateWarning,
    ParameterError,
    ScoreSetError,
    check_int,
    check_probability,
)
from .stats.correlations import ties
from .stats.correlations.coefficients import rescaled
from .stats.corpus import CorpusScores
from .stats.resampling.draws import check_rng

MIN_SYSTEMS = 3


def check_scoreset(ds: Any) -> ScoreSet:
    """``ds`` as a ScoreSet (the scores of a :class:`CheckedScores` passed down by an enclosing call)."""
    if isinstance(ds, CheckedScores):
        return ds.ds
    if not isinstance(ds, ScoreSet):
        raise ParameterError(f"`ds` must be a ScoreSet; got {type(ds).__name__}.")
    return ds


@dataclass(frozen=True, eq=False)
class CheckedScores:
    """The scores of one call, checked once at its public entry point; the layers below receive it and trust it.

    ``ds`` holds ``human`` and every one of ``metrics``; after :meth:`scored` (``corpus`` is then a dict) its
    systems without any score of the human or of a metric are left out (one
    :class:`~metaeval.errors.DataWarning`, :func:`scored_systems`) and ``corpus`` holds the checked corpus
    statistics (:func:`check_corpus_statistics`). A public function given a CheckedScores for the same human and
    a subset of its metrics (:func:`trusted`) skips these checks: a report checks ``human`` once, and its table,
    significance matrix and analyses reuse the result. The matrices the correlations read are kept
    (:meth:`human_matrix`, :meth:`metric_matrix`).
    """

    ds: ScoreSet
    human: str
    metrics: tuple[str, ...]
    corpus: dict[str, CorpusScores] | None = None
    _arrays: dict = field(default_factory=dict, repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        return self.ds.shape

    def scored(self, corpus_statistics: Any = None) -> "CheckedScores":
        """These scores without their unscored systems and with their corpus statistics checked (once)."""
        if self.corpus is not None:
            return self
        ds = self.ds
        if not corpus_statistics:  # corpus statistics are aligned with every system of ds
            ds = scored_systems(ds, self.human, self.metrics)
        return replace(self, ds=ds, corpus=check_corpus_statistics(ds, corpus_statistics), _arrays={})

    def for_metrics(self, metrics: tuple[str, ...]) -> "CheckedScores":
        """The same checked scores for a subset of the metrics (the matrices read so far are shared)."""
        return self if metrics == self.metrics else replace(self, metrics=tuple(metrics))

    def human_matrix(self) -> np.ndarray:
        """The human's matrix as the correlations read it (:func:`human_scores`)."""
        if "human" not in self._arrays:
            self._arrays["human"] = rescaled(self.ds.matrix(self.human))
        return self._arrays["human"]

    def metric_matrix(self, metric: str, level: str):
        """``metric`` as ``level`` reads it (:func:`metric_scores`): its corpus statistics at the system level,
        else its matrix."""
        if level == "system" and metric in (self.corpus or {}):
            return self.corpus[metric]
        if metric not in self._arrays:
            self._arrays[metric] = rescaled(self.ds.matrix(metric))
        return self._arrays[metric]


def trusted(ds: Any, human: Any, metrics: Any) -> CheckedScores | None:
    """``ds`` itself when it is a scored :class:`CheckedScores` of ``human`` holding every one of ``metrics``
    (a name or a list; None: its own metrics), narrowed to them; else None (the caller checks)."""
    if not isinstance(ds, CheckedScores) or ds.corpus is None or ds.human != human:
        return None
    if metrics is None:
        return ds
    names = (metrics,) if isinstance(metrics, str) else metrics
    try:
        names = tuple(names)
    except TypeError:
        return None
    if not names or not all(isinstance(m, str) and m in ds.metrics for m in names) or len(set(names)) != len(names):
        return None
    return ds.for_metrics(names)


def check_scores(ds: Any, human: Any, metrics: Any = None, *, minimum: int = 1,
                 human_name: bool = False) -> CheckedScores:
    """The one door of a call's scores: ``ds`` a ScoreSet, ``human`` one of its scorers (a string first, with
    ``human_name``), ``metrics`` checked by :func:`check_metrics`. A :class:`CheckedScores` that already holds
    them is returned as it is (:func:`trusted`). Call :meth:`CheckedScores.scored` next, where the call leaves
    out unscored systems."""
    known = trusted(ds, human, metrics)
    if known is not None and len(known.metrics) >= minimum:
        return known
    ds = check_scoreset(ds)
    if human_name and not isinstance(human, str):
        raise ParameterError(f"`human` must be a scorer name; got {human!r}.")
    ds.require(human, param="human")
    check_gold_aggregation(ds, human)
    metrics = check_metrics(ds, metrics, human, minimum=minimum)
    return CheckedScores(ds, human, metrics)



def check_gold_aggregation(ds: ScoreSet, human: str, *, param: str = "aggregation", language_pair: str | None = None) -> None:
    """Refuse a non-mean ``ds.aggregation`` when ``human`` has one score per cell: nothing is aggregated, so the
    choice would be silently ignored (an MQM ratings file's ``mqm`` is already the mean of its raters). One
    message for the CLI (``param='--aggregation'``), ``metaeval mt`` (``language_pair``) and the Python API."""
    if ds.aggregation == DEFAULT_AGGREGATION or human not in ds.scorers or ds.n_annotators(human) != 1:
        return
    mqm = bool(ds.description and any(part.split(": ", 1)[-1].startswith("MQM ratings")
                                      for part in ds.description.split("; ")))
    where = f"language pair {language_pair!r}: " if language_pair is not None else ""
    raise ParameterError(
        f"`{param}` must be {DEFAULT_AGGREGATION!r} when the gold has one score per cell ({where}{human!r}"
        + (", the mean of its raters as an MQM ratings file gives it" if mqm else "")
        + f"; nothing to aggregate); got {ds.aggregation!r}.")

def check_pair(ds: ScoreSet, metric: Any, human: Any, corpus_statistics: Any = None) -> CheckedScores:
    """The door of one correlation of ``metric`` with ``human`` (the metric may be any scorer, the human too):
    corpus statistics checked, unscored systems left out, then ``metric`` and ``human`` looked up, in this
    order. A CheckedScores holding both is trusted."""
    known = trusted(ds, human, (metric,))
    if known is not None:
        return known
    ds = check_scoreset(ds)
    corpus = check_corpus_statistics(ds, corpus_statistics)
    if not corpus:  # corpus statistics are aligned with every system of ds
        ds = scored_systems(ds, human, (metric,))
    ds.require(metric, param="metric")
    ds.require(human, param="human")
    check_gold_aggregation(ds, human)
    return CheckedScores(ds, human, (metric,), corpus)


check_level = vocabulary.canonical_level
check_coefficient = vocabulary.canonical_coefficient
check_method = vocabulary.check_method
check_alternative = vocabulary.check_alternative
check_undefined = vocabulary.check_undefined
check_interval = vocabulary.check_interval


def check_n_resamples(n_resamples: Any) -> int:
    return check_int("n_resamples", n_resamples, minimum=1)


def check_confidence_level(confidence_level: Any) -> float:
    return check_probability("confidence_level", confidence_level)


def check_alpha(alpha: Any) -> float:
    return check_probability("alpha", alpha)


def check_tie_threshold(tie_threshold: Any) -> float:
    return vocabulary.check_tie_threshold(tie_threshold)


rng_and_seed = check_rng  # the one rng validator, in metaeval.stats.resampling.draws


def check_metrics(ds: ScoreSet, metrics: Any, human: str, *, minimum: int = 1,
                  param: str = "metrics") -> tuple[str, ...]:
    """The one validator of a metric list: ``metrics`` as a tuple of distinct scorers of ``ds``.

    None means every scorer of ``ds`` but ``human``; a single string is one metric (never iterated
    letter by letter); every name must be a scorer of ``ds`` other than ``human``; at least ``minimum``. Errors
    name ``param``.
    """
    if metrics is None:
        metrics = [m for m in ds.metrics if m != human]
    if isinstance(metrics, str):
        metrics = (metrics,)
    try:
        metrics = tuple(metrics)
    except TypeError:
        raise ParameterError(f"`{param}` must be a scorer name or a list of scorer names; got {metrics!r}.") from None
    if not metrics:
        raise ParameterError(f"`{param}` must name at least one scorer; got an empty list.")
    for metric in metrics:
        ds.require(metric, param=param)
        if metric == human:
            raise ParameterError(f"`{param}` must not contain the human scorer; got {metric!r}.")
    if len(set(metrics)) != len(metrics):
        raise ParameterError(f"`{param}` must not repeat a scorer; got {list(metrics)!r}.")
    if len(metrics) < minimum:
        raise ParameterError(f"`{param}` must name at least {minimum} scorers; got {list(metrics)!r}.")
    return metrics


def scored_systems(ds: ScoreSet, human: str, metrics: Any = ()) -> ScoreSet:
    """``ds`` without the systems that have no score at all of ``human`` or of one of ``metrics``.

    Such a system has no system score, and in judged-subset mode it would leave no input that every system
    has (every system-level result undefined); at the other levels it contributes no pair. It is left out of
    the whole call, for every metric, so that all results of one call are over the same systems, with one
    :class:`~metaeval.errors.DataWarning` naming it (``metaeval mt`` does the same with
    ``systems_without_human``). Corpus metrics are checked by their own statistics elsewhere.
    """
    names = tuple(n for n in (human, *((metrics,) if isinstance(metrics, str) else metrics)) if n in ds.scorers)
    keep = np.ones(len(ds.systems), dtype=bool)
    missing: dict[str, list[str]] = {}
    for name in dict.fromkeys(names):
        scored = np.isfinite(ds.matrix(name)).any(axis=1)
        for i in np.flatnonzero(~scored):
            missing.setdefault(ds.systems[i], []).append(name)
        keep &= scored
    if keep.all():
        return ds
    if keep.sum() == 0:
        return ds  # nothing would remain: the level's own checks say why
    shown = "; ".join(f"{system!r} (no score of {', '.join(repr(n) for n in names_)})"
                      for system, names_ in list(missing.items())[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    warnings.warn(f"left out {len(missing)} system(s) without any score: {shown}{more}.", DataWarning, stacklevel=3)
    return ds.subset(systems=[s for s, k in zip(ds.systems, keep) if k],
                     description=f"without unscored systems {','.join(missing)}")


def check_permutable(named: Mapping[str, np.ndarray]) -> None:
    """Refuse a metric whose cells are constant before a permutation test standardizes it (its z-scores do not
    exist), naming the metric (the array layer below knows only positions)."""
    for name, values in named.items():
        if isinstance(values, CorpusScores):
            continue
        valid = np.asarray(values, dtype=np.float64)
        valid = valid[np.isfinite(valid)]
        if valid.size < 2 or bool(ties.is_constant(valid)):
            raise DegenerateDataError(
                f"metric {name!r} must vary over its non-missing cells to be standardized for a permutation test;"
                f" got the same value in all {valid.size} of them (use a bootstrap test, or leave it out).")


def check_level_design(ds: ScoreSet, level: str) -> None:
    """Refuse a level the data's design cannot support: too few systems, or (summary level) one input,
    where the mean of per-input correlations is the system level computed again."""
    n, m = ds.shape
    if level in ("system", "summary", "global", "partial") and n < MIN_SYSTEMS:
        raise ScoreSetError(
            f"a {level}-level correlation needs at least {MIN_SYSTEMS} systems; got {n}."
        )
    if level == "summary" and m < 2:
        raise ScoreSetError(
            f"a summary-level correlation needs at least 2 inputs (it averages one correlation per input); got {m}."
            " With one input per system use the system level."
        )
    if level == "by-system" and m < MIN_SYSTEMS:
        raise ScoreSetError(f"a by-system correlation needs at least {MIN_SYSTEMS} inputs; got {m}.")


def default_levels(ds: ScoreSet) -> tuple[str, ...]:
    """The levels of a table when none are named: :data:`~metaeval.defaults.REPORT_LEVELS`, or only the
    system level when the data has one input (e.g. WMT system-level scores)."""
    return defaults.REPORT_LEVELS if ds.shape[1] > 1 else ("system",)


def check_full_test_set(full_test_set: Any, level: str) -> bool:
    if not isinstance(full_test_set, (bool, np.bool_)):
        raise ParameterError(f"`full_test_set` must be True or False; got {full_test_set!r}.")
    if full_test_set and level != "system":
        raise ParameterError(
            f"`full_test_set` must be False unless `level` is 'system'; got level {level!r}."
        )
    return bool(full_test_set)


def matrices(ds: ScoreSet, scorer: str, *, param: str) -> np.ndarray:
    ds.require(scorer, param=param)
    return ds.matrix(scorer)


def check_corpus_statistics(ds: ScoreSet, corpus_statistics: Any) -> dict[str, CorpusScores]:
    """``{metric: CorpusScores}`` aligned with ``ds`` from ``{metric: CorpusScores | (statistics, aggregate)}``."""
    if corpus_statistics is None:
        return {}
    if not isinstance(corpus_statistics, Mapping):
        raise ParameterError(f"`corpus_statistics` must be a mapping of metric -> (statistics, aggregate); got "
                             f"{type(corpus_statistics).__name__}.")
    out = {}
    for metric, value in corpus_statistics.items():
        ds.require(metric, param="corpus_statistics")
        if not isinstance(value, CorpusScores):
            if not (isinstance(value, tuple) and len(value) == 2):
                raise ParameterError(f"`corpus_statistics[{metric!r}]` must be a CorpusScores or a pair (statistics, "
                                     f"aggregate); got {type(value).__name__}.")
            value = CorpusScores(*value)
        if value.shape != ds.shape:
            raise ParameterError(f"`corpus_statistics[{metric!r}]` must cover the {ds.shape[0]} systems x "
                                 f"{ds.shape[1]} inputs of the data; got statistics of shape "
                                 f"{value.statistics.shape}.")
        if not value.present.all(axis=0).any():
            lacking = [s for s, has in zip(ds.systems, value.present.any(axis=1)) if not has]
            raise ParameterError(f"`corpus_statistics[{metric!r}]` must have statistics for every system on at least "
                                 f"one input (a corpus score compares systems on one test set); got none"
                                 + (f"; systems without any: {', '.join(map(repr, lacking[:5]))}." if lacking else "."))
        out[metric] = value
    return out


def human_scores(ds: ScoreSet, human: str, *, param: str = "human") -> np.ndarray:
    """The human's matrix for a correlation, divided by a power of two beyond 2^+-400 like the metrics'
    (:func:`metric_scores`)."""
    return rescaled(matrices(ds, human, param=param))


def metric_scores(ds: ScoreSet, metric: str, corpus: dict, level: str, *, param: str):
    """The metric as the level sees it: its corpus statistics at the system level, else its matrix.

    The matrix of scores beyond 2^+-400 in magnitude is divided by a power of two (exact:
    :func:`metaeval.stats.correlations.coefficients.rescaled`), so that no correlation path over- or underflows.
    """
    if level == "system" and metric in corpus:
        return corpus[metric]
    return rescaled(matrices(ds, metric, param=param))


def corpus_flag(*sources) -> dict[str, Any]:
    """The signature field of a single correlation or test in which some metric is a corpus metric."""
    return {"corpus_level": "yes"} if any(isinstance(s, CorpusScores) for s in sources) else {}


def corpus_field(corpus: dict, metrics, levels) -> dict[str, Any]:
    """The signature field naming the corpus metrics used (system level only)."""
    used = tuple(m for m in metrics if m in corpus)
    if not used or "system" not in levels:
        return {}
    texts = tuple(dict.fromkeys(corpus[m].source for m in used if getattr(corpus[m], "source", "")))
    return {"corpus_level": used, **({"corpus_texts": ";".join(texts)} if texts else {})}


def warn_if_undefined(statistic: float, what: str) -> None:
    if np.isnan(statistic):
        warnings.warn(f"{what} is undefined (every group was constant or had < 2 values).", DegenerateWarning, stacklevel=3)


def full_test_set_columns(x: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """In full-test-set mode, the metric keeps every input it scored and the human every judged input."""
    x_cols = ~np.all(np.isnan(x), axis=0)
    z_cols = ~np.all(np.isnan(z), axis=0)
    return x[:, x_cols], z[:, z_cols]



def check_tie_tolerance(tie_tolerance: Any) -> float:
    """The relative tie tolerance of a public function's ``tie_tolerance`` argument, validated
    (:func:`metaeval.stats.correlations.ties.check_tie_tolerance`); None is the default,
    :data:`metaeval.defaults.TIE_TOLERANCE`."""
    return defaults.TIE_TOLERANCE if tie_tolerance is None else ties.check_tie_tolerance(tie_tolerance)


def tie_field(rtol: float) -> dict[str, float]:
    """The signature field of the tie tolerance ``rtol``: ``{"tie_tolerance": rtol}``, or none for the default
    (signatures name the settings that differ from a default run)."""
    return {} if rtol == defaults.TIE_TOLERANCE else {"tie_tolerance": rtol}


def available_memory() -> int | None:
    """Bytes of memory this machine can still give (Linux ``MemAvailable``; else free physical pages);
    None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as stream:
            for line in stream:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    import os

    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def resampling_bytes(n_resamples: int, n_systems: int, n_inputs: int) -> int:
    """Bytes that ``n_resamples`` resamples of an ``n_systems`` x ``n_inputs`` design hold at once, at least.

    The draws are generated whole and shared by every metric pair of a call (DESIGN.md section 3):
    BOOT-BOTH's row and column indices (int64, ``k (N + M)``), PERM-BOTH's packed swap bits
    (``k N ceil(M / 8)`` bytes), and a few float64 statistics per resample (the distributions kept for
    percentiles and p-values). The batched temporaries of the kernels come on top (bounded, a few MiB).
    """
    k, n, m = int(n_resamples), int(n_systems), int(n_inputs)
    return k * (8 * (n + m) + n * (-(-m // 8)) + 8 * 8)


def _size(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def check_resample_memory(n_resamples: Any, n_systems: int, n_inputs: int, *, param: str = "n_resamples",
                          available: int | None = None) -> None:
    """Refuse a number of resamples whose draws cannot fit in the memory still available.

    The one up-front check (the CLI commands call it through ``metaeval.cli.source.load_source`` once the
    data's shape is known, before computing): without it ``--n-resamples 2000000000`` tried to allocate
    89 GiB and died in a traceback, or, below the machine's size, would swap for hours.

    Raises
    ------
    ParameterError
        "`param` must be small enough for the resamples to fit in memory; got ...", with the estimate
        (:func:`resampling_bytes`) and the available memory.
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        return  # not a resample count: the function that takes it says so
    available = available_memory() if available is None else available
    if available is None:
        return
    needed = resampling_bytes(n_resamples, n_systems, n_inputs)
    if needed > available:
        raise ParameterError(
            f"`{param}` must be small enough for the resamples to fit in memory; got {int(n_resamples)} (at least"
            f" {_size(needed)} for {n_systems} systems x {n_inputs} inputs, {_size(available)} available)."
        )
