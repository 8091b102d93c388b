"""The NIST score (Doddington 2002) as defined by Leusch et al. (ACL-05 workshop) and NIST's mteval-v13a.

For candidates ``E_k`` with references ``E~_{r,k}`` (Leusch, Ueffing, Vilar & Ney 2005, section 2.1.4)::

    Info(e_1^m) = log2( count(e_1^{m-1}) / count(e_1^m) )        counts over every reference of the
                                                                   reference corpus; count(e_1^0) = its words
    NIST = lp * sum_{m=1..5} [ sum_k sum_{e_1^m} min(n_{e,k}, max_r n~_{e,r,k}) Info(e_1^m) ] / max(n_m, 1)
    lp   = exp( beta * ln^2 min(1, I / I*) ),   beta = ln(0.5) / ln^2(1.5)

``n_m`` is the number of candidate m-grams, ``I`` the candidate words and ``I*`` the reference length,
summed over the items (mteval's ``average``: the mean length of each item's references). The penalty is
0.5 at ``I / I* = 2/3`` and 1 at ratios >= 1, as in mteval-v13a's ``nist_length_penalty``.

Sufficient statistics. The information weights depend on the whole reference corpus, so they are
computed once per call (:meth:`Nist.with_reference_corpus`, :meth:`Nist.item_statistics`) and then held
fixed: every item's statistics ``[info_1 .. info_N, n_1 .. n_N, I*_k]`` (information-weighted clipped
matches per order, candidate m-grams per order, reference length) are additive, and resampling the items
(paired bootstrap, approximate randomization) re-sums them with the weights of the full reference set,
as mteval's document and system scores do. ``docs/metrics.md`` ("NIST") states the decisions.
"""
from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import ParameterError, check_choice, check_int, require_module
from ..signature import Signature
from ._inputs import as_segment, check_bool, check_pair
from .mt_preprocessing import BOUNDARY_END, BOUNDARY_START, reference_length as _reference_length, \
    resolve_preprocessing

__all__ = ["NIST_BETA", "NIST_REF_LENGTHS", "NIST_TOKENIZERS", "Nist", "OwnWeightStatistics", "information_weights",
           "nist_length_penalty", "reference_length"]

#: sacrebleu tokenizers that need no extra download ('13a' is mteval-v13a's tokenization).
NIST_TOKENIZERS = ("13a", "intl", "none", "zh", "char")
#: Reference length strategies (Leusch et al. 2005, section 3.3); 'average' is mteval's.
NIST_REF_LENGTHS = ("average", "closest", "shortest", "nearest-to-average")
#: Brevity penalty exponent: ``exp(beta ln^2(2/3)) = 0.5`` (mteval-v13a: ratio_x 1.5, score_x 0.5).
NIST_BETA = math.log(0.5) / math.log(1.5) ** 2

Tokens = tuple[str, ...]


def nist_length_penalty(ratio: Any) -> Any:
    """NIST's brevity penalty ``exp(beta ln^2 min(1, ratio))``, 0 for ``ratio <= 0`` (scalar or array).

    ``ratio`` is candidate length / reference length; the penalty is 0.5 at ``2/3`` and 1 at ``>= 1``.
    """
    r = np.asarray(ratio, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(r >= 1, 1.0, np.exp(NIST_BETA * np.log(np.where(r > 0, np.minimum(r, 1.0), 1.0)) ** 2))
    out = np.where(r > 0, out, 0.0)
    return float(out) if out.ndim == 0 else out


def reference_length(candidate_length: int, reference_lengths: Sequence[int], strategy: str = "average") -> float:
    """The reference length ``I*_k`` of one candidate (Leusch et al. 2005, section 3.3).

    Parameters
    ----------
    candidate_length : int
    reference_lengths : sequence of int
        The lengths of the candidate's references (at least one).
    strategy : {'average', 'closest', 'shortest', 'nearest-to-average'}
        'average': their mean (mteval's NIST). 'closest': the length closest to the candidate's, the
        shorter one on ties (BLEU's). 'shortest': the minimum. 'nearest-to-average': the reference length
        closest to their mean, the shorter one on ties.
    """
    lengths = [int(n) for n in reference_lengths]
    if not lengths:
        raise ParameterError(f"`reference_lengths` must hold at least one length; got {reference_lengths!r}.")
    check_choice("ref_length", strategy, NIST_REF_LENGTHS)
    return float(_reference_length(candidate_length, lengths, strategy))  # the one definition: mt_preprocessing


def _ngrams(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def information_weights(references: Sequence[Sequence[str]], max_order: int = 5, *,
                        boundaries: int = 0) -> dict[Tokens, float]:
    """``Info(e_1^m) = log2(count(e_1^{m-1}) / count(e_1^m))`` over tokenized references, m = 1..max_order.

    ``references`` is every reference sentence of the corpus (a list of tokens each); counts run over all
    of them, the unigram denominator is their total number of words (mteval-v13a's ``compute_ngram_info``).
    ``boundaries``: the number of sentence-boundary words in each reference (``MtPreprocessing``), left
    out of that total; they still count as the history of the m-grams they start.
    """
    counts: Counter = Counter()
    words = 0
    for ref in references:
        words += len(ref) - boundaries
        for n in range(1, max_order + 1):
            counts.update(_ngrams(ref, n))
    return {g: math.log2((counts[g[:-1]] if len(g) > 1 else words) / c) for g, c in counts.items()}


def _digest(references: Sequence[Sequence[str]]) -> str:
    """Order-free digest of a tokenized reference corpus (what the information weights depend on)."""
    h = hashlib.sha256()
    for line in sorted("\x1f".join(ref) for ref in references):
        h.update(line.encode("utf-8"))
        h.update(b"\x1e")
    return h.hexdigest()[:12]


class OwnWeightStatistics(np.ndarray):
    """The statistics of one item weighted by its own references (:meth:`Nist.statistics` of a scorer
    without a reference corpus): a plain array whose type tells :meth:`Nist.corpus_score` not to sum it
    with other items' (each has its own information weights)."""

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))  # it prints as the plain array it is


class Nist:
    """NIST (Doddington 2002) as in Leusch et al. (2005) and mteval-v13a, with sufficient statistics.

    Parameters
    ----------
    tokenize : {'13a', 'intl', 'none', 'zh', 'char'} or callable, default '13a'
        A sacrebleu tokenizer ('13a' is mteval-v13a's), or a function ``text -> list of tokens``; its
        ``signature`` attribute (else its qualified name) goes into the signature.
    lowercase : bool, default False
        Lowercase before tokenizing (mteval lowercases unless run with ``-c``; sacrebleu's BLEU does not).
    max_ngram_order : int, default 5
    ref_length : {'average', 'closest', 'shortest', 'nearest-to-average'}, default 'average'
        Each item's reference length (:func:`reference_length`); 'average' is mteval's.
    preprocessing : None, str, mapping or MtPreprocessing, default None
        None: ``tokenize`` and ``lowercase`` alone. Otherwise the options of
        :class:`~metaeval.metrics.mt_preprocessing.MtPreprocessing` (a preset name such as
        ``'leusch-best'``, or a mapping) make the tokens (``tokenize`` must then be left at '13a' or be
        'none'; ``lowercase`` still applies first). Boundary words are out of every length, unigram count
        and the unigram weights' word total: they act through m-grams of order >= 2 only
        (``docs/mt-preprocessing.md``).
    info_weights : {'corpus', 'item'}, default 'corpus'
        'corpus': information weights from all the references of the call - the whole reference set in
        :func:`metaeval.score` / ``metaeval score``, :meth:`item_statistics` and corpus statistics, the
        item's own references in a bare :meth:`score` / :meth:`statistics` call (a one-item corpus, as
        nltk's ``sentence_nist``). 'item': always each item's own references.

    Notes
    -----
    See the module docstring for the formula. ``score(c, R)`` is NIST of the one-item corpus;
    ``corpus_score`` of the items' statistics is corpus NIST when the statistics share one set of weights
    (a scorer returned by :meth:`with_reference_corpus`, or :meth:`item_statistics`). An m-gram matched
    but absent from the weights' reference corpus has weight 0 (mteval's undefined value).

    References
    ----------
    .. [1] G. Doddington, "Automatic evaluation of machine translation quality using n-gram co-occurrence
       statistics", HLT 2002.
    .. [2] G. Leusch, N. Ueffing, D. Vilar, H. Ney, "Preprocessing and Normalization for Automatic
       Evaluation of Machine Translation", ACL-05 Workshop on Intrinsic and Extrinsic Evaluation Measures
       for MT and/or Summarization, 2005, section 2.1.4.
    """

    name = "nist"
    scale = "0-inf"

    def __init__(self, *, tokenize: str | Callable[[str], Sequence[str]] = "13a", lowercase: bool = False,
                 max_ngram_order: int = 5, ref_length: str = "average", info_weights: str = "corpus",
                 preprocessing: Any = None):
        if callable(tokenize):
            self.tokenize = tokenize
        else:
            self.tokenize = check_choice("tokenize", tokenize, NIST_TOKENIZERS)
        self.preprocessing = resolve_preprocessing(preprocessing)
        if self.preprocessing is not None:
            if self.tokenize not in ("13a", "none"):
                raise ParameterError(
                    "`tokenize` must be 'none' (or left at '13a') when `preprocessing` is given, which "
                    f"tokenizes; got {tokenize!r}."
                )
            self.tokenize = "none"
        self._nb = 0 if self.preprocessing is None else self.preprocessing.n_boundaries
        self.lowercase = check_bool("lowercase", lowercase)
        self.max_ngram_order = check_int("max_ngram_order", max_ngram_order, minimum=1)
        self.ref_length = check_choice("ref_length", ref_length, NIST_REF_LENGTHS)
        self.info_weights = check_choice("info_weights", info_weights, ("corpus", "item"))
        self._weights: dict[Tokens, float] | None = None
        self._weights_id: str | None = None
        self._tokenizer = self._make_tokenizer()

    # ----------------------------------------------------------------- set-up
    def _make_tokenizer(self) -> Callable[[str], Sequence[str]]:
        if callable(self.tokenize):
            return self.tokenize
        bleu = require_module("sacrebleu.metrics.bleu", purpose="NIST's tokenizers")
        return bleu._get_tokenizer(self.tokenize)()

    def tokens(self, text: Any) -> Tokens:
        """The tokens of one text (lines joined with a space; lowercased first if asked; then tokenized)."""
        segment = as_segment("text", text)
        if self.lowercase:
            segment = segment.lower()
        if self.preprocessing is not None:
            return tuple(self.preprocessing.tokens(segment))
        out = self._tokenizer(segment.rstrip())
        return tuple(out.split() if isinstance(out, str) else out)

    def with_reference_corpus(self, references: Sequence[Sequence[Any]]) -> "Nist":
        """A copy whose information weights come from ``references`` (one list of references per item).

        With ``info_weights='item'`` the scorer itself is returned. The copy's signature records the
        corpus digest, so scores cached under it are never mixed with another corpus's.
        """
        if self.info_weights == "item":
            return self
        if isinstance(references, str) or any(isinstance(item, str) for item in references):
            raise ParameterError("`references` must be a list with one list of references per item; got "
                                 f"{references!r:.80}.")
        return self._fitted([self.tokens(r) for item in references for r in item if r is not None], references)

    def _fitted(self, refs: list[Tokens], given: Any = None) -> "Nist":
        if not refs:
            raise ParameterError(f"`references` must hold at least one reference; got {given!r}.")
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy._weights = information_weights(refs, self.max_ngram_order, boundaries=self._nb)
        copy._weights_id = f"corpus-{len(refs)}refs-sha256:{_digest(refs)}"
        return copy

    @property
    def signature(self) -> Signature:
        tok = self.tokenize if isinstance(self.tokenize, str) else (
            getattr(self.tokenize, "signature", None)
            or f"{getattr(self.tokenize, '__module__', '?')}.{getattr(self.tokenize, '__qualname__', '?')}")
        weights = self._weights_id or self.info_weights
        prep = {} if self.preprocessing is None else {"preprocessing": self.preprocessing.describe()}
        return Signature.of(metric=self.name, tok=str(tok), lowercase=self.lowercase, **prep,
                            max_ngram_order=self.max_ngram_order, ref_length=self.ref_length, info_weights=weights,
                            lp="mteval-v13a", scale=self.scale)

    def __repr__(self) -> str:
        return f"Nist({str(self.signature)!r})"

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_tokenizer"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._tokenizer = self._make_tokenizer()

    # ----------------------------------------------------------------- statistics
    def _statistics(self, cand: Tokens, refs: list[Tokens], weights: dict[Tokens, float]) -> np.ndarray:
        order, nb = self.max_ngram_order, self._nb
        out = np.zeros(2 * order + 1)
        for n in range(1, order + 1):
            most: Counter = Counter()
            for ref in refs:
                most |= _ngrams(ref, n)  # max count over the references
            matched = _ngrams(cand, n) & most
            if n == 1 and nb:  # boundary words: context of longer m-grams only
                matched.pop((BOUNDARY_START,), None)
                matched.pop((BOUNDARY_END,), None)
            out[n - 1] = sum(weights.get(g, 0.0) * c for g, c in matched.items())
            out[order + n - 1] = max(len(cand) - n + 1 - (nb if n == 1 else 0), 0)
        out[2 * order] = reference_length(len(cand) - nb, [len(r) - nb for r in refs], self.ref_length)
        return out

    def statistics(self, candidate: Any, references: Sequence[Any]) -> np.ndarray:
        """Sufficient statistics of one item, float array ``(2 N + 1,)``.

        ``[info_1 .. info_N, n_1 .. n_N, I*]``: information-weighted clipped matches per order, candidate
        m-grams per order, the reference length. Weights: the scorer's reference corpus
        (:meth:`with_reference_corpus`), else the item's own references.
        """
        hyp, refs = check_pair(candidate, references)
        cand, ref_tokens = self.tokens(hyp), [self.tokens(r) for r in refs]
        weights = self._weights
        if weights is None:
            weights = information_weights(ref_tokens, self.max_ngram_order, boundaries=self._nb)
            if self.info_weights == "corpus":  # a one-item corpus: not summable with other items' statistics
                return self._statistics(cand, ref_tokens, weights).view(OwnWeightStatistics)
        return self._statistics(cand, ref_tokens, weights)

    def score(self, candidate: Any, references: Sequence[Any]) -> dict[str, float]:
        """NIST of one candidate (a one-item corpus), ``{'nist': value}``."""
        return {self.name: float(self.aggregate(self.statistics(candidate, references)))}

    def corpus_score(self, statistics: Sequence[np.ndarray]) -> dict[str, float]:
        """Corpus NIST from the items' :meth:`statistics` (summed, then scored).

        Raises
        ------
        ParameterError
            For statistics of several items that :meth:`statistics` weighted each with its own references
            (a scorer without a reference corpus and ``info_weights='corpus'``): their sum mixes several sets
            of information weights and is no corpus NIST (1.60 where the corpus weights give 2.42 in one
            test). Compute them with :meth:`with_reference_corpus` or :meth:`item_statistics`.
        """
        if isinstance(statistics, np.ndarray) and statistics.ndim == 2:
            stacked = statistics
        else:
            if len(statistics) == 0:
                raise ParameterError(f"`statistics` must be a non-empty list of statistics arrays; got {statistics!r}.")
            own = sum(isinstance(s, OwnWeightStatistics) for s in statistics)
            if own and len(statistics) > 1:
                raise ParameterError(
                    "`statistics` must share one set of information weights for a corpus NIST; got"
                    f" {own} of {len(statistics)} items weighted by their own references (statistics() of a scorer"
                    " without a reference corpus): use scorer.with_reference_corpus(references).statistics(...) or"
                    " scorer.item_statistics(hypotheses, references)."
                )
            stacked = np.vstack([np.asarray(s, dtype=np.float64) for s in statistics])
        return {self.name: float(self.aggregate(stacked.sum(axis=0)))}

    # ------------------------------------------ CorpusStatistic protocol (analyses)
    def item_statistics(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
        """Statistics ``(M, 2 N + 1)``; ``references[r][j]`` is the r-th reference of item j (sacrebleu's streams).

        With ``info_weights='corpus'`` and no fixed corpus, the weights come from all references given here.
        """
        if isinstance(hypotheses, str) or len(hypotheses) == 0:
            raise ParameterError(f"`hypotheses` must be a non-empty list of strings; got {hypotheses!r}.")
        items = []
        for j, h in enumerate(hypotheses):
            hyp, refs = check_pair(h, [stream[j] for stream in references if stream[j] is not None])
            items.append((self.tokens(hyp), [self.tokens(r) for r in refs]))
        if self._weights is not None or self.info_weights == "item":
            fixed = self._weights
            return np.vstack([self._statistics(c, refs, fixed if fixed is not None else
                                               information_weights(refs, self.max_ngram_order, boundaries=self._nb))
                              for c, refs in items])
        weights = self._fitted([r for _, refs in items for r in refs])._weights
        return np.vstack([self._statistics(c, refs, weights) for c, refs in items])

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        """NIST from summed statistics ``(..., 2 N + 1) -> (...)``.

        ``sum_n info_n / max(n_n, 1)`` times :func:`nist_length_penalty` of ``n_1 / I*`` (1 when ``I* = 0``
        and the candidates have words; 0 when they have none).
        """
        sums = np.asarray(sums, dtype=np.float64)
        order = self.max_ngram_order
        if sums.shape[-1] != 2 * order + 1:
            raise ParameterError(f"`sums` must have {2 * order + 1} statistics in its last axis; got shape "
                                 f"{sums.shape}.")
        info, counts, ref = sums[..., :order], sums[..., order:2 * order], sums[..., 2 * order]
        precision = (info / np.maximum(counts, 1.0)).sum(axis=-1)
        words = counts[..., 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(ref > 0, words / np.where(ref > 0, ref, 1.0), np.where(words > 0, 1.0, 0.0))
        return precision * nist_length_penalty(ratio)
