"""The metric registry (:data:`METRICS`) and the protocol every scorer satisfies (:class:`Scorer`).

A *scorer* turns one candidate text and its references into named scores. Every scorer class is
registered under a short name (``"rouge"``, ``"bleu"``, ``"meteor"``, ...) and built with keyword-only
options, ``METRICS[name](**options)``; :func:`get_scorer` does the same with a clear error for unknown
names. The scoring engine relies only on what :class:`Scorer` (and, for corpus-level metrics,
:class:`CorpusScorer`) states; ``docs/metrics.md`` documents the contract.

The registry resolves its classes lazily (``"module:Class"`` strings imported on first use), so importing
:mod:`metaeval.metrics` imports neither sacrebleu nor torch.
"""
from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, Union, runtime_checkable

from ..errors import MetaevalError, ParameterError
from ..signature import Signature

__all__ = [
    "METRICS",
    "CorpusScorer",
    "MetricResourceError",
    "Scorer",
    "flatten_scores",
    "get_scorer",
]

#: A candidate or a reference: a text (sentences one per line) or a list of sentences.
Text = Union[str, Sequence[str]]
#: What :meth:`Scorer.score` returns: measure -> value, or measure -> {component -> value}.
Scores = dict[str, Union[float, dict[str, float]]]


class MetricResourceError(MetaevalError):
    """A metric needs something that is not installed or not found (sacrebleu, WordNet, torch, a model).

    The message says what is missing and how to install it or point at it.
    """


@runtime_checkable
class Scorer(Protocol):
    """What every metric scorer offers (instances of the classes in :data:`METRICS`).

    Attributes
    ----------
    name : str
        The registry name (``"bleu"``); a class attribute.
    signature : Signature
        Every setting that changes a score, with the metric's own version where it has one (sacrebleu's
        signature, the WordNet version, the model directory's hash ...). Two scorers with equal
        ``str(signature)`` give equal scores on equal texts; the engine keys its cache on it. The scorers
        of :data:`METRICS` also record their scale there (``scale:0-1`` or ``scale:0-100``, a class
        attribute ``scale``) and name their outputs ``<metric>[.<variant>]`` in lower case, variants
        ``recall`` / ``precision`` / ``f1`` (``docs/metrics.md``, "Names and scales").
    """

    name: str

    @property
    def signature(self) -> Signature: ...

    def score(self, candidate: Text, references: Sequence[Text]) -> Scores:
        """Scores of one candidate against its (one or more) references.

        ``candidate`` is a text (one sentence per line) or a list of sentences; ``references`` a non-empty
        list of such. Returns a dict whose keys are measure names and whose values are floats or
        one-level dicts of floats (see :func:`flatten_scores`). Always the same keys for one scorer;
        NaN (with a :class:`~metaeval.errors.DegenerateWarning`) where a value is undefined.
        """
        ...


@runtime_checkable
class CorpusScorer(Scorer, Protocol):
    """A scorer whose corpus-level score is computed from per-item sufficient statistics.

    ``corpus_score([statistics(c_j, R_j) for j in items])`` is the metric's corpus-level value (corpus
    BLEU, ROUGE with ``-t``, ...); resampling methods resample the statistics and call it again.
    Statistics are small picklable objects (a numpy array or a frozen dataclass).
    """

    def statistics(self, candidate: Text, references: Sequence[Text]) -> Any: ...

    def corpus_score(self, statistics: Sequence[Any]) -> Scores: ...


class _Registry(Mapping):
    """Name -> scorer class, importing each class on first access."""

    def __init__(self, entries: Mapping[str, str]):
        self._paths = dict(entries)
        self._classes: dict[str, type] = {}

    def __getitem__(self, name: str) -> type:
        cls = self._classes.get(name)
        if cls is None:
            module, _, attribute = self._paths[name].partition(":")
            cls = getattr(importlib.import_module(module, __package__), attribute)
            self._classes[name] = cls
        return cls

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, name: object) -> bool:
        return name in self._paths

    def __repr__(self) -> str:
        return f"METRICS({', '.join(self._paths)})"


#: Registry of scorer classes by name. ``METRICS["bleu"](tokenize="13a")`` builds a scorer.
METRICS: Mapping[str, type] = _Registry(
    {
        "rouge": ".rouge_scorer:RougeScorer",
        "bleu": ".sacrebleu_metrics:Bleu",
        "chrf": ".sacrebleu_metrics:Chrf",
        "ter": ".sacrebleu_metrics:Ter",
        "meteor": ".meteor:Meteor",
        "js-2": ".jensen_shannon:JensenShannon",
        "wer": ".error_rates:Wer",
        "per": ".error_rates:Per",
        "bertscore": ".bertscore:BertScore",
        "moverscore": ".moverscore:MoverScore",
        "nist": ".nist:Nist",
        "stm": ".syntactic:Stm",
        "hwcm": ".syntactic:Hwcm",
        "dstm": ".syntactic:Dstm",
    }
)


def get_scorer(name: str, **options: Any) -> Scorer:
    """A scorer built from its registry name and keyword options.

    Parameters
    ----------
    name : str
        One of :data:`METRICS` (``'rouge'``, ``'bleu'``, ``'chrf'``, ``'ter'``, ``'meteor'``, ``'js-2'``,
        ``'wer'``, ``'per'``, ``'bertscore'``, ``'moverscore'``, ``'nist'``).
    **options
        Keyword options of the scorer class.

    Returns
    -------
    Scorer

    Raises
    ------
    ParameterError
        If ``name`` is not registered or an option is invalid.
    MetricResourceError
        If the metric needs something that is absent (e.g. WordNet, torch, a model directory).
    """
    if not isinstance(name, str) or name not in METRICS:
        listed = ", ".join(repr(n) for n in METRICS)
        raise ParameterError(f"`metric` must be one of {listed}; got {name!r}.")
    cls = METRICS[name]
    accepted = _keyword_options(cls)
    unknown = sorted(set(options) - accepted)
    if unknown:
        listed = ", ".join(repr(k) for k in sorted(accepted)) or "none"
        raise ParameterError(f"the options of metric {name!r} must be among {listed}; got {unknown[0]!r}.")
    return cls(**options)


def option_value(text: str, *, name: str = "--metric-option") -> Any:
    """A metric option's value written as text (``--metric-option METRIC.KEY=VALUE``): its JSON value
    (``true``, ``4``, ``1.2``, ``"x"``, ``[...]``), or the text itself when it is not JSON.

    JSON is read strictly, as every user file is (:func:`metaeval.data.formats.parse_json`): an object
    repeating a key (the standard library would keep the last value silently) or nesting too deep for the
    parser is a :class:`ParameterError` naming ``name``.
    """
    from ..data.formats import JsonShapeError, parse_json

    try:
        return parse_json(text)
    except JsonShapeError as exc:
        raise ParameterError(f"`{name}` must hold plain JSON or text; got {text[:40]!r}"
                             f"{'...' if len(text) > 40 else ''}: {exc}.") from None
    except ValueError:
        return text


def _keyword_options(cls: type) -> set[str]:
    """The keyword options a scorer class's constructor takes."""
    import inspect

    parameters = inspect.signature(cls.__init__).parameters.values()
    return {p.name for p in parameters if p.name != "self"
            and p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)}


def flatten_scores(scores: Mapping[str, Any]) -> dict[str, float]:
    """Flatten a :meth:`Scorer.score` result into scorer names joined with dots.

    ``{"rouge-2": {"recall": 0.4}, "bleu": 21.3}`` -> ``{"rouge-2.recall": 0.4, "bleu": 21.3}``.

    Raises
    ------
    ParameterError
        If a value is neither a number nor a dict of numbers.
    """
    out: dict[str, float] = {}
    for key, value in scores.items():
        if isinstance(value, Mapping):
            for sub, v in value.items():
                out[f"{key}.{sub}"] = _number(f"{key}.{sub}", v)
        else:
            out[key] = _number(key, value)
    return out


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise ParameterError(f"`{name}` must be a number; got {value!r}.")
    return float(value)
