"""BLEU, chrF and TER through sacrebleu (Post 2018), at sentence and corpus level.

Nothing of the three metrics is re-implemented: each scorer holds a sacrebleu metric object, takes its
per-item sufficient statistics from sacrebleu (``_extract_corpus_statistics``, what
``corpus_score`` sums) and computes every score with sacrebleu's ``_compute_score_from_stats``, exactly as
sacrebleu's own paired bootstrap and approximate randomization do. So

* ``score(c, R)`` equals ``sacrebleu.sentence_bleu(c, R, ...)`` (resp. ``sentence_chrf``,
  ``sentence_ter``) with the same options, and
* ``corpus_score([statistics(c_j, R_j) for j])`` equals sacrebleu's ``corpus_score`` of the same texts
  (with one reference stream per reference position).

Scores keep sacrebleu's scale (0-100; TER can exceed 100). The signature keeps sacrebleu's own signature
(without ``nrefs``, which belongs to the data, not to the scorer) inside metaeval's.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ParameterError, check_choice, check_int, require_module
from ..signature import Signature
from ._inputs import check_bool, check_pair

__all__ = ["Bleu", "Chrf", "Ter"]

#: sacrebleu tokenizers that need no extra download or package (``spm``/``flores*``/``*-mecab`` do).
BLEU_TOKENIZERS = ("13a", "none", "zh", "intl", "char")
BLEU_SMOOTH_METHODS = ("exp", "floor", "add-k", "none")


def _sacrebleu_metrics():
    return require_module("sacrebleu.metrics", purpose="BLEU, chrF and TER")


class _SacrebleuScorer(ABC):
    """Shared machinery: statistics, sentence and corpus scores of one sacrebleu metric."""

    name = ""
    #: sacrebleu's scale (``scale`` field of the signature).
    scale = "0-100"
    #: Settings not shown in sacrebleu's own signature, recorded in ours.
    _extra_fields: tuple[str, ...] = ()
    _integer_statistics = True

    def _build(self, metric: Any) -> None:
        self._metric = metric

    # ----------------------------------------------------------------- signature
    @property
    def sacrebleu_signature(self) -> str:
        """sacrebleu's signature of this metric, without ``nrefs`` (e.g. ``case:mixed|eff:yes|...``)."""
        sig = self._metric._SIGNATURE_TYPE({**self._metric.__dict__, "num_refs": 1})
        sig.info.pop("nrefs", None)
        return sig.format()

    @property
    def signature(self) -> Signature:
        extra = {k: getattr(self, k) for k in self._extra_fields}
        return Signature.of(metric=self.name, **extra, sacrebleu=f"({self.sacrebleu_signature})", scale=self.scale)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sacrebleu_signature!r})"

    # ----------------------------------------------------------------- statistics
    def statistics(self, candidate: Any, references: Sequence[Any]) -> np.ndarray:
        """sacrebleu's sufficient statistics of one candidate, a float array ``(S,)``.

        Parameters
        ----------
        candidate : str or sequence of str
            A text (lines joined with a space) or a list of sentences (joined with a space).
        references : sequence of (str or sequence of str)
            One or more references, each like ``candidate``.

        Returns
        -------
        numpy.ndarray
            BLEU: hypothesis length, closest reference length, n-gram matches and totals for
            n = 1..max order; chrF: per order, hypothesis / reference / matched character (and word)
            n-gram counts; TER: number of edits (of the best reference) and average reference length.
        """
        hyp, refs = check_pair(candidate, references)
        return self._item_statistics([hyp], [[r] for r in refs])[0]

    def _item_statistics(self, hyps: list[str], streams: list[list[str]]) -> np.ndarray:
        stats = self._metric._extract_corpus_statistics(hyps, streams)
        return np.asarray(stats, dtype=np.float64).reshape(len(hyps), -1)

    def _score_of(self, summed: np.ndarray) -> float:
        stats = [int(round(v)) for v in summed] if self._integer_statistics else [float(v) for v in summed]
        return float(self._metric._compute_score_from_stats(stats).score)

    def score(self, candidate: Any, references: Sequence[Any]) -> dict[str, float]:
        """Sentence-level score (sacrebleu's ``sentence_score``) of one candidate.

        Returns
        -------
        dict
            ``{name: value}`` on sacrebleu's 0-100 scale.
        """
        return {self.name: self._score_of(self.statistics(candidate, references))}

    def corpus_score(self, statistics: Sequence[np.ndarray]) -> dict[str, float]:
        """Corpus-level score from the items' :meth:`statistics` (summed, then scored by sacrebleu)."""
        if isinstance(statistics, np.ndarray) and statistics.ndim == 2:
            stacked = statistics
        else:
            if len(statistics) == 0:
                raise ParameterError(f"`statistics` must be a non-empty list of statistics arrays; got {statistics!r}.")
            stacked = np.vstack([np.asarray(s, dtype=np.float64) for s in statistics])
        return {self.name: self._score_of(stacked.sum(axis=0))}

    # ------------------------------------------ CorpusStatistic protocol (analyses)
    def item_statistics(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
        """Statistics ``(M, S)`` of ``M`` hypotheses; ``references[r][j]`` is the r-th reference of item j.

        The layout of :class:`metaeval.metrics.corpus_statistics.CorpusStatistic` (sacrebleu's reference
        streams), for :func:`metaeval.compare_systems`.
        """
        if isinstance(hypotheses, str):
            raise ParameterError(f"`hypotheses` must be a list of strings; got the string {hypotheses!r}.")
        return self._item_statistics(list(hypotheses), [list(r) for r in references])

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        """Corpus scores from summed statistics ``(..., S) -> (...)`` (one sacrebleu call per row)."""
        sums = np.asarray(sums, dtype=np.float64)
        flat = sums.reshape(-1, sums.shape[-1])
        out = np.array([self._score_of(row) for row in flat])
        return out.reshape(sums.shape[:-1])

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_metric"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._metric = self._make()

    @abstractmethod
    def _make(self) -> Any:
        """Defined by each concrete scorer."""


class Bleu(_SacrebleuScorer):
    """BLEU (Papineni et al. 2002) through sacrebleu's :class:`sacrebleu.metrics.BLEU`.

    Parameters
    ----------
    tokenize : {'13a', 'none', 'zh', 'intl', 'char'}, default '13a'
        sacrebleu's tokenizer.
    lowercase : bool, default False
    smooth_method : {'exp', 'floor', 'add-k', 'none'}, default 'exp'
    smooth_value : float or None
        For 'floor' (default 0.1) and 'add-k' (default 1).
    max_ngram_order : int, default 4
    effective_order : bool, default True
        Leave out n-gram orders with no n-gram in the candidate (sacrebleu's ``sentence_bleu`` default;
        its ``corpus_bleu`` default is False; the two agree whenever every order has n-grams).

    Notes
    -----
    ``BLEU = BP * exp(sum_n log p_n / N)``, ``BP = min(1, exp(1 - r / c))``, with clipped n-gram
    precisions ``p_n`` over all references and ``r`` the reference length closest to ``c``.

    References
    ----------
    .. [1] K. Papineni, S. Roukos, T. Ward, W.-J. Zhu, "BLEU: a Method for Automatic Evaluation of
       Machine Translation", ACL 2002.
    .. [2] M. Post, "A Call for Clarity in Reporting BLEU Scores", WMT 2018.
    """

    name = "bleu"
    _extra_fields = ("max_ngram_order",)

    def __init__(
        self,
        *,
        tokenize: str = "13a",
        lowercase: bool = False,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        max_ngram_order: int = 4,
        effective_order: bool = True,
    ):
        self.tokenize = check_choice("tokenize", tokenize, BLEU_TOKENIZERS)
        self.lowercase = check_bool("lowercase", lowercase)
        self.smooth_method = check_choice("smooth_method", smooth_method, BLEU_SMOOTH_METHODS)
        if smooth_value is not None and (
            isinstance(smooth_value, bool) or not isinstance(smooth_value, (int, float)) or not smooth_value > 0
        ):
            raise ParameterError(f"`smooth_value` must be a number > 0 or None; got {smooth_value!r}.")
        self.smooth_value = smooth_value
        self.max_ngram_order = check_int("max_ngram_order", max_ngram_order, minimum=1)
        self.effective_order = check_bool("effective_order", effective_order)
        self._build(self._make())

    def _make(self) -> Any:
        return _sacrebleu_metrics().BLEU(
            tokenize=self.tokenize,
            lowercase=self.lowercase,
            smooth_method=self.smooth_method,
            smooth_value=self.smooth_value,
            max_ngram_order=self.max_ngram_order,
            effective_order=self.effective_order,
        )


class Chrf(_SacrebleuScorer):
    """chrF / chrF++ (Popovic 2015, 2017) through sacrebleu's :class:`sacrebleu.metrics.CHRF`.

    Parameters
    ----------
    char_order : int, default 6
    word_order : int, default 0
        2 gives chrF++.
    beta : int, default 2
        Recall is ``beta`` times as important as precision.
    lowercase : bool, default False
    whitespace : bool, default False
        Keep whitespace in character n-grams.
    eps_smoothing : bool, default False
        sacrebleu's epsilon smoothing (as chrF++.py and NLTK) instead of the effective order.

    Notes
    -----
    ``chrF_beta = (1 + beta^2) chrP chrR / (beta^2 chrP + chrR)``, precision and recall averaged over the
    n-gram orders; with several references sacrebleu keeps the best reference's statistics.

    References
    ----------
    .. [1] M. Popovic, "chrF: character n-gram F-score for automatic MT evaluation", WMT 2015.
    """

    name = "chrf"
    _extra_fields = ("beta",)

    def __init__(
        self,
        *,
        char_order: int = 6,
        word_order: int = 0,
        beta: int = 2,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
    ):
        self.char_order = check_int("char_order", char_order, minimum=1)
        self.word_order = check_int("word_order", word_order, minimum=0)
        self.beta = check_int("beta", beta, minimum=1)
        self.lowercase = check_bool("lowercase", lowercase)
        self.whitespace = check_bool("whitespace", whitespace)
        self.eps_smoothing = check_bool("eps_smoothing", eps_smoothing)
        self._build(self._make())

    def _make(self) -> Any:
        return _sacrebleu_metrics().CHRF(
            char_order=self.char_order,
            word_order=self.word_order,
            beta=self.beta,
            lowercase=self.lowercase,
            whitespace=self.whitespace,
            eps_smoothing=self.eps_smoothing,
        )


class Ter(_SacrebleuScorer):
    """Translation Edit Rate (Snover et al. 2006) through sacrebleu's :class:`sacrebleu.metrics.TER`.

    Parameters
    ----------
    case_sensitive : bool, default False
    normalized : bool, default False
        Tercom's normalization (punctuation tokenization etc.).
    no_punct : bool, default False
        Remove punctuation.
    asian_support : bool, default False

    Notes
    -----
    ``TER = 100 * edits / average reference length``: the fewest insertions, deletions, substitutions
    and block shifts turning the candidate into the closest reference. Lower is better.

    References
    ----------
    .. [1] M. Snover, B. Dorr, R. Schwartz, L. Micciulla, J. Makhoul, "A Study of Translation Edit Rate
       with Targeted Human Annotation", AMTA 2006.
    """

    name = "ter"
    _integer_statistics = False

    def __init__(
        self,
        *,
        case_sensitive: bool = False,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
    ):
        self.case_sensitive = check_bool("case_sensitive", case_sensitive)
        self.normalized = check_bool("normalized", normalized)
        self.no_punct = check_bool("no_punct", no_punct)
        self.asian_support = check_bool("asian_support", asian_support)
        self._build(self._make())

    def _make(self) -> Any:
        return _sacrebleu_metrics().TER(
            case_sensitive=self.case_sensitive,
            normalized=self.normalized,
            no_punct=self.no_punct,
            asian_support=self.asian_support,
        )
