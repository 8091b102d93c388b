"""The checks of :func:`metaeval.mt.evaluate.mt_evaluate`, made once, in the library: the language pairs, the
protocol and its options, the golds, the metrics, human baselines and excluded systems, system and corpus
scores. Errors name the caller's words for the parameters (``params=``: the CLI passes its flags)."""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from .. import _validation as iv
from ..data.scoreset import ScoreSet, _suggestion
from ..errors import DataWarning, ParameterError, ScoreSetError, check_choice
from ..stats.mt.protocol import Protocol
from ..vocabulary import MT_HUMAN_TIES, MT_SEGMENTS, MT_SIGNIFICANCE
from .baselines import check_human_baselines

__all__ = ["PARAMS", "exclusions", "language_pair_data", "resolve_protocol"]


def exclusions(items, systems, param):
    """``{lp: set of systems}`` to leave out: ``'SYSTEM'`` in every language pair that has it, ``'LP=SYSTEM'``
    in language pair ``LP`` only. ``systems`` maps each language pair to its systems; an unknown language pair
    or system is a one-line error naming ``param`` (with the closest name)."""
    out = {lp: set() for lp in systems}
    known = tuple(dict.fromkeys(s for names in systems.values() for s in names))
    for item in items:
        if not isinstance(item, str):
            raise ParameterError(f"`{param}` must hold system names or 'LP=SYSTEM'; got {item!r}.")
        lp, sep, name = item.partition("=")
        if sep and lp in systems and item not in known:
            if name not in systems[lp]:
                raise ParameterError(f"`{param}` must name a system of language pair {lp!r}; got {name!r}"
                                     f"{_suggestion(name, tuple(systems[lp]))}.")
            out[lp].add(name)
            continue
        if item not in known:
            hint = (f" (language pairs: {', '.join(map(repr, systems))})" if sep
                    else _suggestion(item, known))
            raise ParameterError(f"`{param}` must name a system of the data or 'LP=SYSTEM'; got {item!r}{hint}.")
        for lp, names in systems.items():
            if item in names:
                out[lp].add(item)
    return out


def resolve_protocol(protocol, tasks=None, significance=None, human_ties=None) -> Protocol:
    """The :class:`Protocol` of a name or an instance, with the options given explicitly replacing its own."""
    if not isinstance(protocol, Protocol):
        from .protocol import load_protocol

        protocol = load_protocol(protocol)
    if tasks is not None:
        tasks = (tasks,) if isinstance(tasks, str) else tuple(tasks)
        if not tasks:
            raise ParameterError("`tasks` must name at least one task; got an empty list.")
        protocol = protocol.replace_tasks(tasks)
    if significance is not None:
        protocol = replace(protocol, significance=check_choice("significance", significance, MT_SIGNIFICANCE))
    if human_ties is not None:
        protocol = replace(protocol, human_ties=check_choice("human_ties", human_ties, MT_HUMAN_TIES))
    return protocol


def _golds(data, human, protocol, param="human"):
    """``{lp: gold scorer}``: ``human`` (a name, or a mapping per language pair) over the protocol's gold over
    the data's only human scorer; every gold must be a scorer of its language pair (errors name ``param``)."""
    per_lp = dict(human) if isinstance(human, Mapping) else {}
    unknown = [lp for lp in per_lp if lp not in data]
    if unknown:
        raise ParameterError(f"`{param}` must name language pairs of the data ({', '.join(map(repr, data))}) in"
                             f" LP=NAME; got {unknown[0]!r}.")
    from ..stats.mt.protocol import PROTOCOLS

    preset = PROTOCOLS.get(protocol.name)
    if preset is None or protocol.gold != preset.gold:  # a user's [gold] table: a typo is refused, as in LP=NAME
        stray = [lp for lp, _ in protocol.gold if lp not in data]
        if stray:
            raise ParameterError(f"the protocol {protocol.name!r}: its [gold] must name language pairs of the data"
                                 f" ({', '.join(map(repr, data))}); got {stray[0]!r}.")
    out = {}
    for lp, ds in data.items():
        given = per_lp.get(lp) or (human if isinstance(human, str) else None)
        gold = given or protocol.gold_for(lp)
        if gold is None:
            gold = ds.default_human
            if gold is None:
                raise ParameterError(
                    f"`{param}` must name the human scorer; got none, and the data marks "
                    + (f"{len(ds.humans)} scorers as human ({', '.join(map(repr, ds.humans))})."
                       if ds.humans else "no scorer as human."))
        if gold not in ds.scorers:
            humans = ", ".join(map(repr, ds.humans)) or "none"
            chosen = "" if given else f" (the protocol {protocol.name!r} chose it)"
            raise ParameterError(f"`{param}`: the gold of language pair {lp!r} must be one of its scorers; got {gold!r}"
                                 f"{chosen} (its human scorers: {humans}; name one with human={{{lp!r}: NAME}} or"
                                 f" --human {lp}=NAME).")
        out[lp] = gold
    return out


def language_pair_data(data) -> dict:
    """``data`` (a ScoreSet, or language pair -> ScoreSet) checked, as {language pair: ScoreSet}."""
    if isinstance(data, ScoreSet):
        data = {data.name or "data": data}
    if not isinstance(data, Mapping) or not data:
        raise ParameterError(f"`data` must be a ScoreSet or a non-empty mapping of language pair -> ScoreSet; "
                             f"got {type(data).__name__}.")
    for lp, ds in data.items():
        if not isinstance(ds, ScoreSet):
            raise ParameterError(f"`data[{lp!r}]` must be a ScoreSet; got {type(ds).__name__}.")
    return {str(lp): ds for lp, ds in data.items()}


PARAMS = ("human", "metrics", "exclude_systems", "human_baselines", "n_resamples", "rater_waves", "aggregation",
          "intervals")
"""The parameters whose name an error may give as the caller's (``params=``: e.g. the CLI's flags)."""


@dataclass(frozen=True)
class _Checked:
    """What :func:`_mt_iv` checked, by name."""

    data: dict
    metrics: list
    golds: dict
    protocol: Protocol
    excluded: tuple
    n_resamples: int
    alpha: float
    segments: str
    systems_dropped: dict
    system_scores: dict
    baselines: tuple
    descriptions: dict


def _names(params):
    """``{parameter: the name its errors give}``: the parameter itself unless ``params`` renames it."""
    if params is None:
        params = {}
    if not isinstance(params, Mapping) or any(k not in PARAMS or not isinstance(v, str) for k, v in params.items()):
        raise ParameterError(f"`params` must map some of {', '.join(map(repr, PARAMS))} to names; got {params!r}.")
    return {name: params.get(name, name) for name in PARAMS}


def _waves(data, waves, seed, name):
    """Every language pair with its raters split into ``waves`` waves (:func:`metaeval.human.waves.rater_waves`):
    one Generator for all, in the order of the language pairs, ``numpy.random.default_rng((seed, 1))`` - a stream
    of the seed apart from the tests' draws."""
    from ..human.waves import rater_waves

    gen = np.random.default_rng((seed, 1))
    out = {}
    for lp, ds in data.items():
        try:
            out[lp] = rater_waves(ds, waves, rng=gen, param=name, recorded_seed=seed).scores
        except ParameterError as err:
            raise ParameterError(f"language pair {lp!r}: {err}") from None
    return out


def _mt_iv(data, metrics, human, protocol, tasks, significance, human_ties, exclude_systems, n_resamples, alpha,
           segments, system_scores, human_baselines, names):
    data = language_pair_data(data)
    descriptions = {lp: ds.description for lp, ds in data.items()}
    protocol = resolve_protocol(protocol, tasks, significance, human_ties)
    segments = check_choice("segments", segments, MT_SEGMENTS)
    golds = _golds(data, human, protocol, names["human"])
    excluded = (exclude_systems,) if isinstance(exclude_systems, str) else tuple(exclude_systems)
    per_lp = exclusions(excluded, {lp: ds.systems for lp, ds in data.items()}, names["exclude_systems"])
    all_golds = set(golds.values())
    first_lp, first = next(iter(data.items()))
    baselines = check_human_baselines(data, golds, metrics, human_baselines, param=names["human_baselines"],
                                      metric_param=names["metrics"])
    if metrics is None:
        metrics = [s for s in first.scorers if s not in first.humans and s not in all_golds and s not in baselines]
        if not metrics:
            raise ParameterError(f"`{names['metrics']}`: language pair {first_lp!r} holds human scores only"
                                 f" ({', '.join(map(repr, first.scorers))}); add a metric's scores (a metric file"
                                 " with --scores LP=PATH, or metrics= in the data).")
    metrics = iv.check_metrics(first, metrics, golds[first_lp], minimum=1, param=names["metrics"])
    clash = [m for m in metrics if m in all_golds]
    if clash:
        raise ParameterError(f"`{names['metrics']}` must not hold a gold of some language pair; got {clash[0]!r}.")
    for metric in metrics:  # a rater of the gold named as a metric: part of the gold, said as for a baseline
        inside = [gold for gold in dict.fromkeys(golds.values()) if metric.startswith(f"{gold}.")]
        if inside:
            warnings.warn(f"metric {metric!r} is part of the gold {inside[0]!r} (its raters are averaged into it), so it"
                          " agrees with the gold partly by construction; it is marked (human): name it with"
                          f" {names['human_baselines']} for a human baseline's verdicts, or take a rater wave as the"
                          " gold and another as the metric.", DataWarning, stacklevel=3)
    metrics = [*metrics, *baselines]  # scored as metrics, under the same draws (mt_baselines)
    out, dropped = {}, {}
    for lp, ds in data.items():
        keep = [s for s in ds.systems if s not in per_lp[lp]]
        ds = ds.subset(systems=keep) if len(keep) < len(ds.systems) else ds
        ds.require(golds[lp], param=names["human"])
        iv.check_gold_aggregation(ds, golds[lp], param=names["aggregation"], language_pair=lp)
        iv.check_metrics(ds, metrics, golds[lp], minimum=1, param=names["metrics"])
        dropped[lp] = {s: [n for n in (golds[lp], *metrics) if not np.isfinite(ds.matrix(n)[ds.systems.index(s)]).any()]
                       for s in ds.systems}
        dropped[lp] = {s: names_ for s, names_ in dropped[lp].items() if names_}
        if dropped[lp]:
            items = list(dropped[lp].items())
            shown = "; ".join(f"{s!r} (no score of {', '.join(map(repr, n))})" for s, n in items[:3])
            shown += f" and {len(items) - 3} more" if len(items) > 3 else ""
            left = len(ds.systems) - len(items)
            if left < iv.MIN_SYSTEMS:
                raise ScoreSetError(f"language pair {lp!r} must keep at least {iv.MIN_SYSTEMS} systems scored by the"
                                     f" human and every metric; got {left} (left out {len(items)} without any score:"
                                     f" {shown}).")
            warnings.warn(f"language pair {lp!r}: left out {len(items)} system(s) without any score: {shown}.",
                          DataWarning, stacklevel=3)
            ds = ds.subset(systems=[s for s in ds.systems if s not in dropped[lp]])
        iv.check_level_design(ds, "system")
        out[lp] = ds
    for level, stat in ((t.level, t.statistic) for t in protocol.tasks):
        for lp, ds in out.items():
            if level != "system" and len(ds.inputs) < 2 or stat == "soft-accuracy" and len(ds.inputs) < 2:
                raise ParameterError(f"task '{level}/{stat}' needs segment scores; language pair {lp!r} has "
                                     f"{len(ds.inputs)} segment (system-level scores only).")
    fixed = _system_scores_iv(out, system_scores, [*metrics, *all_golds])
    k = iv.check_n_resamples(n_resamples)
    for ds in out.values():
        iv.check_resample_memory(k, *ds.shape, param=names["n_resamples"])
    return _Checked(data=out, metrics=metrics, golds=golds, protocol=protocol, excluded=excluded, n_resamples=k,
                    alpha=iv.check_alpha(alpha), segments=segments, systems_dropped=dropped, system_scores=fixed,
                    baselines=baselines, descriptions=descriptions)


def _system_scores_iv(data, system_scores, scorers):
    """``{lp: {scorer: (N,) system scores}}`` for the scorers with a finite system score for every kept system."""
    if system_scores is None:
        return {lp: {} for lp in data}
    if not isinstance(system_scores, Mapping):
        raise ParameterError(f"`system_scores` must map language pairs to ScoreSets of system scores; got "
                             f"{type(system_scores).__name__}.")
    out = {}
    for lp, ds in data.items():
        sys_ds = system_scores.get(lp)
        out[lp] = {}
        if sys_ds is None:
            continue
        if not isinstance(sys_ds, ScoreSet) or len(sys_ds.inputs) != 1:
            raise ParameterError(f"`system_scores[{lp!r}]` must be a ScoreSet with one input (system scores); got "
                                 f"{type(sys_ds).__name__}.")
        rows = [sys_ds.systems.index(s) if s in sys_ds.systems else -1 for s in ds.systems]
        for scorer in scorers:
            if scorer not in sys_ds.scorers or min(rows) < 0:
                continue
            values = sys_ds.matrix(scorer)[rows, 0]
            if np.isfinite(values).all():
                out[lp][scorer] = values.astype(np.float64)
    return out


def _corpus_iv(data, corpus_statistics):
    """``{metric: {lp: CorpusScores}}`` validated against every language pair's data."""
    if corpus_statistics is None:
        return {}
    if not isinstance(corpus_statistics, Mapping):
        raise ParameterError(f"`corpus_statistics` must be a mapping of metric -> {{language pair: corpus "
                             f"statistics}}; got {type(corpus_statistics).__name__}.")
    out = {m: {} for m in corpus_statistics}
    for lp, ds in data.items():
        given = {}
        for metric, per_lp in corpus_statistics.items():
            if not isinstance(per_lp, Mapping) or lp not in per_lp:
                raise ParameterError(f"`corpus_statistics[{metric!r}]` must map every language pair to its corpus "
                                     f"statistics; got none for {lp!r}.")
            given[metric] = per_lp[lp]
        for metric, scores in iv.check_corpus_statistics(ds, given).items():
            out[metric][lp] = scores
    return out


def _options_iv(permute, recalibrate, corpus_statistics, parsed):
    """The options that exclude each other: re-calibration and SPA with corpus metrics under the permutation test."""
    if recalibrate and permute:
        raise ParameterError("`recalibrate` must be False with significance='permutation' (the pairs test of "
                             "acc23 keeps each metric's calibrated threshold); got True.")
    if permute and corpus_statistics and any(stat == "soft-accuracy" for _, stat in parsed):
        raise ParameterError("`significance` must be 'bootstrap' for soft pairwise accuracy with corpus metrics "
                             "(their segment cells cannot be exchanged); got 'permutation'.")
