"""A meta-evaluation protocol of the WMT metrics task as data: :class:`Protocol` and its presets.

A protocol fixes what :func:`metaeval.mt.evaluate.mt_evaluate` computes and how it ranks: the tasks (a
level, a statistic and a weight each; the level fixes the grouping, the statistic the tie rule), the
rescaling of the statistics before averaging, the test between metrics, the rule for system pairs the human
ties, the p-value convention and the gold (human) scorer, per language pair where it differs. ``wmt23``,
``wmt24``, ``wmt25`` and ``mean`` are instances (:data:`PROTOCOLS`); :func:`protocol_from_mapping` builds
one from a mapping (a TOML file's table, docs/mt.md "Your own protocol"), every mistake a one-line error
naming the key.

References: Freitag, M. et al. (2023, 2024). Results of the WMT23 / WMT24 Metrics Shared Task; mt-metrics-eval
``tasks.WMT23``, ``tasks.WMT24``, ``tasks.WMT25`` (google-research/mt-metrics-eval).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from metaeval.errors import ParameterError
from metaeval.vocabulary import LEVEL_CHOICES, MT_HUMAN_TIES, MT_SIGNIFICANCE, MT_STATISTICS, check_mt_task

__all__ = ["GROUPING", "LANGUAGE_PAIRS", "PROTOCOLS", "PVALUE_CONVENTIONS", "Protocol", "RESCALING", "TaskSpec",
           "normalized_weights", "protocol_from_mapping"]

GROUPING = {"system": "system scores", "summary": "item", "global": "none", "by-system": "system"}
"""The grouping each level implies (mt-metrics-eval's ``level`` and ``avg_by``)."""

RESCALING = ("wmt", "none")
"""``'wmt'``: (s - low) / (high - low), accuracies in [0, 1], correlations in [-1, 1] (mt-metrics-eval
``TaskSetResults.AverageCorrs``); ``'none'``: the statistics as they are (metaeval's plain mean)."""

PVALUE_CONVENTIONS = ("fraction", "randomized")
"""``c / k`` (mt-metrics-eval) or ``(1 + c) / (1 + k)``."""

LANGUAGE_PAIRS = "language-pairs"
"""The pooled system accuracy's weight: the number of language pairs (WMT23)."""

_CALIBRATED = ("acc23", "tau23")


def normalized_weights(weights) -> "np.ndarray":
    """Positive finite ``weights`` divided by their sum, without overflow or underflow: they are first scaled
    by the power of two that brings the largest near 1 (exact), so weights of 1.7e308 (whose sum is inf)
    or of 1e-320 (subnormal) give the same shares as 1.7 or 1e-5 would, and ordinary weights the same
    numbers as ``w / w.sum()``."""
    import numpy as np

    w = np.asarray(weights, dtype=np.float64)
    if w.size == 0:
        return w
    w = np.ldexp(w, -int(np.frexp(w.max())[1]))
    return w / w.sum()


@dataclass(frozen=True)
class TaskSpec:
    """One task: ``level/statistic`` with its weight in the average.

    The level fixes the grouping (:data:`GROUPING`); the statistic its tie rule (acc23 / tau23: a tie
    threshold calibrated per metric, Deutsch, Foster & Freitag 2023; the others: the library's tie rule)."""

    level: str
    statistic: str
    weight: float = 1.0

    @property
    def name(self) -> str:
        return f"{self.level}/{self.statistic}"

    @property
    def grouping(self) -> str:
        return GROUPING[self.level]

    @property
    def tie_rule(self) -> str:
        return "calibrated threshold" if self.statistic in _CALIBRATED else "tie rule"


@dataclass(frozen=True)
class Protocol:
    """A WMT-style evaluation protocol (module docstring).

    Attributes
    ----------
    name : str
    tasks : tuple of TaskSpec
        Computed in every language pair; system-level pairwise accuracy is also pooled over them.
    rescaling : {'wmt', 'none'}
    pooled_weight : float or 'language-pairs'
        Weight of the pooled system accuracy in the pooled average (WMT23: the number of language pairs).
    significance : {'permutation', 'bootstrap'}
    human_ties : {'count', 'skip'}
        System pairs the human ties in system accuracy: counted (mt-metrics-eval) or left out.
    pvalue : {'fraction', 'randomized'}
    human : str or None
        The gold of every language pair not in ``gold`` (None: the data's only human scorer, or ``human=``).
    gold : tuple of (language pair, scorer)
        A gold per language pair where it differs (WMT25: ``mqm`` for some pairs, ``esa-human1`` for others).
    description : str
    """

    name: str
    tasks: tuple[TaskSpec, ...]
    rescaling: str = "wmt"
    pooled_weight: float | str = LANGUAGE_PAIRS
    significance: str = "permutation"
    human_ties: str = "count"
    pvalue: str = "fraction"
    human: str | None = None
    gold: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    description: str = ""

    def gold_for(self, lp: str) -> str | None:
        return dict(self.gold).get(lp, self.human)

    def replace_tasks(self, tasks) -> "Protocol":
        """The protocol with these tasks (``'level/statistic'`` strings or TaskSpec), weight 1 each."""
        from dataclasses import replace

        specs = tuple(t if isinstance(t, TaskSpec) else TaskSpec(*check_mt_task(t)) for t in tasks)
        return replace(self, tasks=specs)

    def lines(self) -> list[str]:
        """What ``metaeval mt --show-protocol`` prints: the tasks with grouping, tie rule and weight, then the
        averaging, test, human-tie rule, p-values and gold."""
        import textwrap

        out = [f"protocol {self.name}"]
        out += textwrap.wrap(self.description, 96, initial_indent="  ", subsequent_indent="  ")
        shares = normalized_weights([t.weight for t in self.tasks])
        out.append("tasks (per language pair; weights normalised to sum 1 in each scope):")
        for t, share in zip(self.tasks, shares):
            out.append(f"  {t.name:<22} grouping {t.grouping}; ties: {t.tie_rule}; weight {t.weight:g}"
                       f" ({share:.3g})")
        if any(t.level == "system" and t.statistic == "accuracy" for t in self.tasks):
            weight = ("number of language pairs" if self.pooled_weight == LANGUAGE_PAIRS
                      else f"{self.pooled_weight:g}")
            out.append(f"  pooled:system/accuracy over all language pairs; pooled scope weight: {weight}")
        out.append("average: " + ("rescaled to [0, 1] (accuracies as they are, correlations (r + 1) / 2)"
                                  if self.rescaling == "wmt" else "the statistics as they are"))
        out.append(f"test: {self.significance}; p-values: {'c / k' if self.pvalue == 'fraction' else '(1 + c) / (1 + k)'};"
                   f" human-tied system pairs: {self.human_ties}")
        golds = ", ".join(f"{lp}: {name}" for lp, name in self.gold)
        out.append(f"gold: {self.human or 'the data' + chr(39) + 's human scorer'}" + (f"; {golds}" if golds else ""))
        return out


def _wmt23():
    return Protocol("wmt23", (TaskSpec("system", "accuracy"), TaskSpec("system", "pearson"),
                              TaskSpec("global", "pearson"), TaskSpec("summary", "acc23")),
                    description="WMT23 as mt-metrics-eval's tasks.WMT23 (Freitag et al. 2023)")


def _wmt24():
    return Protocol("wmt24", (TaskSpec("system", "soft-accuracy"), TaskSpec("summary", "acc23")),
                    description="WMT24 as mt-metrics-eval's tasks.WMT24 (Freitag et al. 2024)")


# mt-metrics-eval meta_info.py: WMT25's gold is MQM for these language pairs, esa-human1 for the others
WMT25_MQM_PAIRS = ("en-ko_KR", "ja-zh_CN")


def _wmt25():
    return Protocol("wmt25", (TaskSpec("system", "soft-accuracy"), TaskSpec("summary", "acc23")),
                    human="esa-human1", gold=tuple((lp, "mqm") for lp in WMT25_MQM_PAIRS),
                    description="WMT25 as mt-metrics-eval's tasks.WMT25: SPA and item-grouped acc23 per language"
                                " pair, equal weights; gold esa-human1, mqm for en-ko_KR and ja-zh_CN")


def _mean():
    return Protocol("mean", _wmt23().tasks, rescaling="none", pooled_weight=1.0, human_ties="skip",
                    pvalue="randomized", description="metaeval's plain mean of the task statistics")


PROTOCOLS = {"wmt23": _wmt23(), "wmt24": _wmt24(), "wmt25": _wmt25(), "mean": _mean()}
"""The presets by name (``vocabulary.MT_PROTOCOLS``)."""

_KEYS = ("name", "description", "task", "rescaling", "pooled_weight", "significance", "human_ties", "pvalue",
         "human", "gold")
_TASK_KEYS = ("level", "statistic", "weight")


def _choice(where, key, value, choices):
    if value not in choices:
        raise ParameterError(f"{where}`{key}` must be one of {', '.join(map(repr, choices))}; got {value!r}.")
    return value


def _text(where, key, value):
    if not isinstance(value, str) or not value:
        raise ParameterError(f"{where}`{key}` must be a non-empty string; got {value!r}.")
    return value


def _weight(where, key, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        raise ParameterError(f"{where}`{key}` must be a positive number; got {value!r}.")
    return float(value)


def protocol_from_mapping(table: Mapping, where: str = "") -> Protocol:
    """A :class:`Protocol` from a mapping (a TOML document's top level): ``name``, ``[[task]]`` tables with
    ``level``, ``statistic`` and optional ``weight``, and optional ``description``, ``rescaling``,
    ``pooled_weight``, ``significance``, ``human_ties``, ``pvalue``, ``human`` and a ``[gold]`` table of
    language pair = scorer. ``where`` prefixes every error (e.g. the file name)."""
    unknown = [k for k in table if k not in _KEYS]
    if unknown:
        raise ParameterError(f"{where}unknown key {unknown[0]!r}; a protocol has the keys {', '.join(_KEYS)}.")
    if "name" not in table:
        raise ParameterError(f"{where}`name` must be given; got no name.")
    name = _text(where, "name", table["name"])
    tasks = table.get("task")
    if not isinstance(tasks, list) or not tasks:
        raise ParameterError(f"{where}`task` must be a non-empty list of [[task]] tables; got {tasks!r}.")
    specs = []
    for t, task in enumerate(tasks, start=1):
        at = f"{where}task {t}: "
        if not isinstance(task, Mapping):
            raise ParameterError(f"{at}must be a table with level and statistic; got {task!r}.")
        bad = [k for k in task if k not in _TASK_KEYS]
        if bad:
            raise ParameterError(f"{at}unknown key {bad[0]!r}; a task has the keys {', '.join(_TASK_KEYS)}.")
        for key in ("level", "statistic"):
            if key not in task:
                raise ParameterError(f"{at}`{key}` must be given; got none.")
        _choice(at, "level", task["level"], LEVEL_CHOICES)
        _choice(at, "statistic", task["statistic"], MT_STATISTICS)
        try:
            level, statistic = check_mt_task(f"{task['level']}/{task['statistic']}", param="task")
        except ParameterError as err:
            raise ParameterError(f"{at}{err}") from None
        specs.append(TaskSpec(level, statistic, _weight(at, "weight", task.get("weight", 1.0))))
    names = [s.name for s in specs]
    if len(set(names)) < len(names):
        from collections import Counter

        repeated, times = next((n, c) for n, c in Counter(names).items() if c > 1)
        raise ParameterError(f"{where}`task` must list each task once; got {repeated!r} {times:,} times"
                             f" ({len(names):,} tasks).")
    pooled = table.get("pooled_weight", LANGUAGE_PAIRS)
    if pooled != LANGUAGE_PAIRS:
        pooled = _weight(where, "pooled_weight", pooled)
    gold = table.get("gold", {})
    if not isinstance(gold, Mapping):
        raise ParameterError(f"{where}`gold` must be a table of language pair = scorer; got {gold!r}.")
    golds = tuple((str(lp), _text(where, f"gold.{lp}", value)) for lp, value in gold.items())
    return Protocol(
        name, tuple(specs),
        rescaling=_choice(where, "rescaling", table.get("rescaling", "wmt"), RESCALING),
        pooled_weight=pooled,
        significance=_choice(where, "significance", table.get("significance", "permutation"), MT_SIGNIFICANCE),
        human_ties=_choice(where, "human_ties", table.get("human_ties", "count"), MT_HUMAN_TIES),
        pvalue=_choice(where, "pvalue", table.get("pvalue", "fraction"), PVALUE_CONVENTIONS),
        human=None if table.get("human") is None else _text(where, "human", table["human"]),
        gold=golds,
        description=str(table.get("description", "")),
    )
