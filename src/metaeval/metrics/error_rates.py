"""Word error rate (WER) and position-independent error rate (PER), with corpus-level statistics.

Both compare token lists. Tokens: the text is split on whitespace (``tokenize='whitespace'``, for
pre-tokenized text as in MT and ASR evaluation) or into word-character runs and single punctuation marks
(``'words'``, METEOR's tokenizer), after optional lower-casing.

* WER = ``E / |r|`` with ``E`` the Levenshtein distance between the token lists (insertions, deletions
  and substitutions, each costing 1).
* PER (Tillmann et al. 1997) ignores word order: with ``m = sum_w min(c_w, r_w)`` the bag-of-words
  overlap, ``E = max(|c|, |r|) - m``, i.e. ``PER = 1 - (m - max(0, |c| - |r|)) / |r|``.

With several references the one with the lowest rate is used (ties: the first): the reference-length
strategy 'best' of Leusch et al. (2005, Section 3.3). ``ref_length`` chooses another one ('closest',
'shortest', 'average', 'nearest-to-average', 'average-nearest'; :mod:`.mt_preprocessing`), with
``E = min_r d(c, r)``, the paper's WER numerator. Per item the sufficient statistics are ``(E, I*)``; the corpus rate is
``sum E / sum I*``. Rates are fractions (not percentages) and lower is better; they can exceed 1 when the
candidate is longer than the reference. ``preprocessing`` replaces ``tokenize`` by the options of
:class:`~.mt_preprocessing.MtPreprocessing` (``docs/mt-preprocessing.md``).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ParameterError, check_choice
from ..signature import Signature
from ._inputs import check_bool, check_pair, warn_degenerate
from .meteor import TOKENIZERS, tokenize
from .mt_preprocessing import REFERENCE_LENGTHS, reference_errors, reference_length, resolve_preprocessing

__all__ = ["Per", "Wer", "levenshtein"]


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """Edit distance between two token sequences (unit-cost insertion, deletion, substitution)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _position_independent_errors(c: Sequence[str], r: Sequence[str]) -> int:
    common = Counter(c) & Counter(r)
    return max(len(c), len(r)) - sum(common.values())


class _ErrorRate(ABC):
    name = ""
    #: Fractions (above 1 when a candidate needs more edits than the reference has words).
    scale = "0-1"

    def __init__(self, *, tokenize: str = "whitespace", lowercase: bool = False, preprocessing: Any = None,
                 ref_length: str = "best"):
        self.tokenize = check_choice("tokenize", tokenize, TOKENIZERS)
        self.lowercase = check_bool("lowercase", lowercase)
        self.preprocessing = resolve_preprocessing(preprocessing)
        if self.preprocessing is not None and self.tokenize != "whitespace":
            raise ParameterError(
                "`tokenize` must be left at 'whitespace' when `preprocessing` is given, which tokenizes; "
                f"got {tokenize!r}."
            )
        self.ref_length = check_choice("ref_length", ref_length, REFERENCE_LENGTHS)

    @property
    def signature(self) -> Signature:
        prep = {} if self.preprocessing is None else {"preprocessing": self.preprocessing.describe()}
        return Signature.of(metric=self.name, tokenize=self.tokenize, lowercase=self.lowercase, **prep,
                            references=self.ref_length, scale=self.scale)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(tokenize={self.tokenize!r}, lowercase={self.lowercase})"

    @abstractmethod
    def _errors(self, c: list[str], r: list[str]) -> int:
        """Defined by each concrete scorer."""

    def _tokens(self, text: str) -> list[str]:
        if self.preprocessing is None:
            return tokenize(text, self.tokenize, self.lowercase)
        tokens = self.preprocessing.tokens(text)
        return [t.lower() for t in tokens] if self.lowercase else tokens

    def statistics(self, candidate: Any, references: Sequence[Any]) -> np.ndarray:
        """``[errors, reference length]`` of the best reference (lowest rate; ties: the first)."""
        cand, refs = check_pair(candidate, references)
        return self._statistics(cand, refs)

    def _statistics(self, cand: str, refs: Sequence[str]) -> np.ndarray:
        # boundary words (if any) start / end both sequences: distances unchanged, out of the lengths
        nb = 0 if self.preprocessing is None else self.preprocessing.n_boundaries
        c = self._tokens(cand)
        distances, lengths = [], []
        for ref in refs:
            r = self._tokens(ref)
            distances.append(self._errors(c, r))
            lengths.append(len(r) - nb)
        errors = reference_errors(lengths, distances, self.ref_length)
        length = reference_length(len(c) - nb, lengths, self.ref_length, distances=distances)
        return np.array([errors, length], dtype=np.float64)

    def _rate(self, stats: np.ndarray) -> float:
        if stats[1] == 0:
            warn_degenerate(
                f"`references` must contain tokens for {self.name.upper()} to be defined; got an empty reference "
                "(rate is NaN)."
            )
            return math.nan
        return float(stats[0] / stats[1])

    def score(self, candidate: Any, references: Sequence[Any]) -> dict[str, float]:
        """``{name: rate}`` of one candidate against its best reference."""
        return {self.name: self._rate(self.statistics(candidate, references))}

    def corpus_score(self, statistics: Sequence[np.ndarray]) -> dict[str, float]:
        """Corpus rate ``sum errors / sum reference lengths`` from the items' :meth:`statistics`."""
        if len(statistics) == 0:
            raise ParameterError(f"`statistics` must be a non-empty list of statistics arrays; got {statistics!r}.")
        stacked = np.vstack([np.asarray(s, dtype=np.float64) for s in statistics])
        return {self.name: self._rate(stacked.sum(axis=0))}

    # CorpusStatistic protocol (metaeval.metrics.corpus_statistics), for compare_systems
    def item_statistics(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
        """Statistics ``(M, 2)``; ``references[r][j]`` is the r-th reference of item j (sacrebleu's layout)."""
        if isinstance(hypotheses, str):
            raise ParameterError(f"`hypotheses` must be a list of strings; got the string {hypotheses!r}.")
        return np.vstack([
            self.statistics(h, [stream[j] for stream in references]) for j, h in enumerate(hypotheses)
        ]).reshape(len(hypotheses), 2)

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        """Rates from summed statistics ``(..., 2) -> (...)``; NaN where the reference total is 0."""
        sums = np.asarray(sums, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sums[..., 1] > 0, sums[..., 0] / np.where(sums[..., 1] > 0, sums[..., 1], 1.0), np.nan)


class Wer(_ErrorRate):
    """Word error rate: Levenshtein distance over reference length (see the module docstring).

    Parameters
    ----------
    tokenize : {'whitespace', 'words'}, default 'whitespace'
    lowercase : bool, default False
    preprocessing : None, str, mapping or MtPreprocessing, default None
        The options of :class:`~metaeval.metrics.mt_preprocessing.MtPreprocessing` (a preset name or a
        mapping), in place of ``tokenize``.
    ref_length : {'best', 'closest', 'shortest', 'average', 'nearest-to-average', 'average-nearest'}, default 'best'
        The reference-length strategy (Leusch et al. 2005, Section 3.3; see the module docstring).
    """

    name = "wer"

    def _errors(self, c: list[str], r: list[str]) -> int:
        return levenshtein(c, r)


class Per(_ErrorRate):
    """Position-independent error rate (Tillmann et al. 1997): WER without word order.

    Parameters
    ----------
    tokenize : {'whitespace', 'words'}, default 'whitespace'
    lowercase : bool, default False
    preprocessing : None, str, mapping or MtPreprocessing, default None
        The options of :class:`~metaeval.metrics.mt_preprocessing.MtPreprocessing` (a preset name or a
        mapping), in place of ``tokenize``.
    ref_length : {'best', 'closest', 'shortest', 'average', 'nearest-to-average', 'average-nearest'}, default 'best'
        The reference-length strategy (Leusch et al. 2005, Section 3.3; see the module docstring).

    References
    ----------
    .. [1] C. Tillmann, S. Vogel, H. Ney, A. Zubiaga, H. Sawaf, "Accelerated DP Based Search for
       Statistical Translation", Eurospeech 1997.
    """

    name = "per"

    def _errors(self, c: list[str], r: list[str]) -> int:
        return _position_independent_errors(c, r)
