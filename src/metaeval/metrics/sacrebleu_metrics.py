"""BLEU, chrF and TER through sacrebleu (Post 2018), at sentence and corpus level.

Nothing of the three metrics is re-implemented: each scorer holds a sacrebleu metric object, takes its
per-item sufficient statistics from sacrebleu (``_extract_corpus_statistics``, what
``corpus_score`` sums) and computes every score with sacrebleu's ``_compute_score_from_stats``, exactly as
sacrebleu's own paired bootstrap and approximate randomization do. So

* ``score(c, R)`` equals ``sacrebleu.sentence_bleu(c, R, ...)`` (resp. ``sentence_chrf``,
  ``sentence_ter``) with the same options, and
* ``corpus_score([statistics(c_j, R_j) for j])`` equals sacrebleu's ``corpus_score`` of the same texts
  (with one reference stream per reference position).

Scores keep sacrebleu's scale (0-100; TER can exceed 100); a BLEU or chrF score a few ulps away from 100 (a
perfect match computed as ``100 * exp(mean log precision)``, e.g. ``100.00000000000004``) is 100, as sacrebleu
prints it. The signature keeps sacrebleu's own signature
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
from .mt_preprocessing import DISTANCE_STRATEGIES, REFERENCE_LENGTHS, reference_errors, reference_length, \
    resolve_preprocessing

__all__ = ["Bleu", "Chrf", "Ter"]

#: sacrebleu tokenizers that need no extra download or package (``spm``/``flores*``/``*-mecab`` do).
BLEU_TOKENIZERS = ("13a", "none", "zh", "intl", "char")
BLEU_SMOOTH_METHODS = ("exp", "floor", "add-k", "none")
#: Reference-length strategies of BLEU and TER (the distance-based 'nearest' and 'best' are TER's only).
BLEU_REFERENCE_LENGTHS = tuple(s for s in REFERENCE_LENGTHS if s not in DISTANCE_STRATEGIES)


def _sacrebleu_metrics():
    return require_module("sacrebleu.metrics", purpose="BLEU, chrF and TER")


class _SacrebleuScorer(ABC):
    """Shared machinery: statistics, sentence and corpus scores of one sacrebleu metric."""

    name = ""
    #: The largest score the metric can take (BLEU, chrF: 100); None when unbounded (TER).
    maximum: float | None = 100.0
    #: sacrebleu's scale (``scale`` field of the signature).
    scale = "0-100"
    #: Settings not shown in sacrebleu's own signature, recorded in ours.
    _extra_fields: tuple[str, ...] = ()
    _integer_statistics = True
    #: The reference-length strategy of sacrebleu's own statistics (Leusch et al. 2005, Section 3.3).
    _default_ref_length = ""
    preprocessing = None
    ref_length = ""

    def _set_mt_options(self, preprocessing: Any, ref_length: str, choices: tuple[str, ...]) -> None:
        """Validate and keep the options of :mod:`.mt_preprocessing` (``docs/mt-preprocessing.md``)."""
        self.preprocessing = resolve_preprocessing(preprocessing)
        self.ref_length = check_choice("ref_length", ref_length, choices)

    @property
    def _sacrebleu_only(self) -> bool:
        """True when sacrebleu's statistics are used as they are (the defaults)."""
        return self.preprocessing is None and self.ref_length == self._default_ref_length

    def _mt_fields(self) -> dict[str, Any]:
        """Signature fields of the non-default MT options (none with the defaults: signatures unchanged)."""
        out: dict[str, Any] = {}
        if self.preprocessing is not None:
            out["preprocessing"] = self.preprocessing.describe()
        if self.ref_length != self._default_ref_length:
            out["ref_length"] = self.ref_length
        return out

    def _segments(self, texts: list[str | None]) -> list[str | None]:
        """The texts as sacrebleu sees them: the preprocessed tokens joined by spaces, or unchanged."""
        if self.preprocessing is None:
            return texts
        return [None if t is None else " ".join(self.preprocessing.tokens(t)) for t in texts]

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
        extra.update(self._mt_fields())
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
        if self._integer_statistics:  # an 'average' or 'nearest' reference length may be fractional
            stats = [int(round(v)) if float(v).is_integer() else float(v) for v in summed]
        else:
            stats = [float(v) for v in summed]
        return self._bounded(float(self._metric._compute_score_from_stats(stats).score))

    def _bounded(self, score: float) -> float:
        """``score`` within the metric's range: sacrebleu's exp(mean log precision) x 100 of a perfect match
        can land a few ulps beyond 100 (``100.00000000000004``), which sacrebleu's own printing (2 decimals)
        hides; such a score is 100 (and 0 below 0). Every other score is sacrebleu's, to the last digit."""
        if self.maximum is not None and abs(score - self.maximum) <= 8 * np.finfo(float).eps * self.maximum:
            return self.maximum
        return max(score, 0.0) if self.maximum is None else min(max(score, 0.0), self.maximum)

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
    preprocessing : None, str, mapping or MtPreprocessing, default None
        None: sacrebleu's ``tokenize`` and ``lowercase`` alone. Otherwise the options of
        :class:`~metaeval.metrics.mt_preprocessing.MtPreprocessing` (a preset name such as
        ``'leusch-best'``, or a mapping): sacrebleu then counts n-grams over the preprocessed tokens
        (``tokenize`` must be left at '13a' or be 'none'); boundary words count only in n-grams of order
        >= 2 (Leusch et al. 2005).
    ref_length : {'closest', 'shortest', 'average', 'nearest-to-average'}, default 'closest'
        The reference length ``r`` of each segment (Leusch et al. 2005, Section 3.3); 'closest' is
        sacrebleu's (ties: the shorter).

    Notes
    -----
    ``BLEU = BP * exp(sum_n log p_n / N)``, ``BP = min(1, exp(1 - r / c))``, with clipped n-gram
    precisions ``p_n`` over all references and ``r`` the reference length chosen by
    ``ref_length`` (by default the one closest to ``c``). With the defaults every statistic is
    sacrebleu's own; otherwise sacrebleu still counts the n-grams (``tokenize='none'`` on the
    preprocessed tokens) and only ``c``, ``r`` and the unigram counts of boundary words are set here.

    References
    ----------
    .. [1] K. Papineni, S. Roukos, T. Ward, W.-J. Zhu, "BLEU: a Method for Automatic Evaluation of
       Machine Translation", ACL 2002.
    .. [2] M. Post, "A Call for Clarity in Reporting BLEU Scores", WMT 2018.
    .. [3] G. Leusch, N. Ueffing, D. Vilar, H. Ney, "Preprocessing and Normalization for Automatic
       Evaluation of Machine Translation", ACL-05 Workshop on Intrinsic and Extrinsic Evaluation
       Measures for MT and/or Summarization, 2005.
    """

    name = "bleu"
    _extra_fields = ("max_ngram_order",)
    _default_ref_length = "closest"

    def __init__(
        self,
        *,
        tokenize: str = "13a",
        lowercase: bool = False,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        max_ngram_order: int = 4,
        effective_order: bool = True,
        preprocessing: Any = None,
        ref_length: str = "closest",
    ):
        self.tokenize = check_choice("tokenize", tokenize, BLEU_TOKENIZERS)
        self._set_mt_options(preprocessing, ref_length, BLEU_REFERENCE_LENGTHS)
        if self.preprocessing is not None:
            if self.tokenize not in ("13a", "none"):
                raise ParameterError(
                    "`tokenize` must be 'none' (or left at '13a') when `preprocessing` is given, which "
                    f"tokenizes; got {tokenize!r}."
                )
            self.tokenize = "none"
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
            force=self.preprocessing is not None,  # tokenized on purpose: no "forgot to detokenize" warning
        )

    def _item_statistics(self, hyps: list[str], streams: list[list[str]]) -> np.ndarray:
        if self._sacrebleu_only:
            return super()._item_statistics(hyps, streams)
        hyps, streams = self._segments(hyps), [self._segments(s) for s in streams]
        stats = super()._item_statistics(hyps, streams)
        nb = 0 if self.preprocessing is None else self.preprocessing.n_boundaries
        if nb:  # boundary words always match once: out of the lengths and the unigram counts
            stats[:, 0] -= nb
            stats[:, 2] -= nb
            stats[:, 2 + self.max_ngram_order] -= nb
        words = self._metric._preprocess_segment
        for j, row in enumerate(stats):
            lengths = [len(words(stream[j]).split()) - nb for stream in streams if stream[j] is not None]
            row[1] = reference_length(row[0], lengths, self.ref_length)
        return stats


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
    preprocessing : None, str, mapping or MtPreprocessing, default None
        None: sacrebleu's own processing alone. Otherwise the options of
        :class:`~metaeval.metrics.mt_preprocessing.MtPreprocessing` run first and sacrebleu's options
        above then apply to the tokens joined by spaces. Boundary words are not inserted: an edit
        distance is unchanged by a word that starts (or ends) both sequences.
    ref_length : {'average', 'closest', 'shortest', 'nearest-to-average', 'average-nearest', 'best'}, default 'average'
        The reference length of each segment (Leusch et al. 2005, Section 3.3): tercom's 'average' with
        the fewest edits over the references; 'average-nearest' averages the lengths of the references at the
        fewest edits; 'best' takes the reference of the lowest edit rate, with its own edits.

    Notes
    -----
    ``TER = 100 * edits / reference length``: the fewest insertions, deletions, substitutions
    and block shifts turning the candidate into the closest reference, over the average reference
    length by default. Lower is better. With non-default ``ref_length`` or ``preprocessing`` the
    edits of each reference come from sacrebleu's ``translation_edit_rate``.

    References
    ----------
    .. [1] M. Snover, B. Dorr, R. Schwartz, L. Micciulla, J. Makhoul, "A Study of Translation Edit Rate
       with Targeted Human Annotation", AMTA 2006.
    """

    name = "ter"
    maximum = None
    _integer_statistics = False
    _default_ref_length = "average"

    def __init__(
        self,
        *,
        case_sensitive: bool = False,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        preprocessing: Any = None,
        ref_length: str = "average",
    ):
        self._set_mt_options(preprocessing, ref_length, REFERENCE_LENGTHS)
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

    def _segments(self, texts: list[str | None]) -> list[str | None]:
        if self.preprocessing is None:
            return texts
        return [None if t is None else " ".join(self.preprocessing.words(t)) for t in texts]  # no boundary words

    def _item_statistics(self, hyps: list[str], streams: list[list[str]]) -> np.ndarray:
        if self._sacrebleu_only:
            return super()._item_statistics(hyps, streams)
        edit_rate = require_module("sacrebleu.metrics.ter", purpose="TER").translation_edit_rate
        words = self._metric._preprocess_segment
        hyps, streams = self._segments(hyps), [self._segments(s) for s in streams]
        out = np.empty((len(hyps), 2))
        for j, hyp in enumerate(hyps):
            hyp_words = words(hyp).split()
            pairs = [edit_rate(hyp_words, words(stream[j]).split()) for stream in streams if stream[j] is not None]
            edits, lengths = [float(e) for e, _ in pairs], [float(n) for _, n in pairs]
            out[j] = (reference_errors(lengths, edits, self.ref_length),
                      reference_length(len(hyp_words), lengths, self.ref_length, distances=edits))
        return out
