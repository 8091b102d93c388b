"""Automatic nugget matching by term overlap, in the manner of POURPRE (Lin & Demner-Fushman 2005).

POURPRE replaces the assessor's binary "nugget present" decision by the unigram overlap between the
nugget's description and the response. Here a nugget's *content terms* are its ROUGE-1.5.5 tokens
(lower-cased letters and digits) without the SMART stopwords and, by default, Porter-stemmed as ROUGE's
``-m`` (:mod:`metaeval.metrics.rouge_tokenize`); its *overlap* with a response is the share of its
distinct content terms that occur among the response's terms::

    overlap(u, s) = |terms(u) & terms(s)| / |terms(u)|

Decisions (documented in docs/nuggets-extrinsic.md): ``match='threshold'`` (default) counts a nugget as
matched when ``overlap >= threshold`` (default 0.6, :data:`metaeval.defaults.NUGGET_THRESHOLD`);
``match='fraction'`` counts the overlap itself (a soft count, POURPRE's fractional match). Terms are not
idf-weighted (POURPRE's weighting needs a document collection that the user may not have). A nugget with
no content term (only stopwords) cannot be matched: its overlap is NaN and the callers leave it out of the
answer key, counting it.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import defaults
from ..errors import ParameterError, check_choice
from .rouge_tokenize import RougeTokenizer, split_lines

__all__ = ["MATCH_MODES", "NuggetMatcher", "response_length"]

MATCH_MODES = ("threshold", "fraction")

_TAGS = ("<t>", "</t>")


def response_length(text: str) -> int:
    """``l`` of nugget F: non-whitespace characters of ``text``, ignoring ``<t>`` / ``</t>`` sentence tags."""
    for tag in _TAGS:
        text = text.replace(tag, " ")
    return sum(1 for ch in text if not ch.isspace())


class NuggetMatcher:
    """Match nuggets to responses by the share of the nugget's content terms found in the response.

    Parameters
    ----------
    match : {'threshold', 'fraction'}
        'threshold': a nugget counts 1 when its overlap is >= ``threshold``, else 0; 'fraction': it counts
        its overlap (a number in [0, 1]).
    threshold : float
        In (0, 1]; used by ``match='threshold'``.
    stem : bool
        Porter-stem terms as ROUGE-1.5.5 ``-m`` does.
    """

    def __init__(self, *, match: str = defaults.NUGGET_MATCH, threshold: float = defaults.NUGGET_THRESHOLD,
                 stem: bool = True):
        self.match = check_choice("match", match, MATCH_MODES)
        try:
            value = float(threshold)
        except (TypeError, ValueError):
            raise ParameterError(f"`threshold` must be a number in (0, 1]; got {threshold!r}.") from None
        if not 0.0 < value <= 1.0:
            raise ParameterError(f"`threshold` must be a number in (0, 1]; got {threshold!r}.")
        self.threshold = value
        self.stem = bool(stem)
        self._tokenizer = RougeTokenizer(stem=self.stem, remove_stopwords=True)

    def terms(self, text: str) -> frozenset[str]:
        """Distinct content terms of ``text`` (sentence tags ignored)."""
        for tag in _TAGS:
            text = text.replace(tag, " ")
        return frozenset(t for line in split_lines(text) for t in self._tokenizer.tokens(line))

    def overlaps(self, nuggets: Sequence[str], text: str) -> np.ndarray:
        """``overlap(u, text)`` of every nugget u (NaN for a nugget without content terms)."""
        found = self.terms(text)
        out = np.empty(len(nuggets))
        for k, nugget in enumerate(nuggets):
            terms = self.terms(nugget)
            out[k] = len(terms & found) / len(terms) if terms else np.nan
        return out

    def credits(self, overlaps: np.ndarray) -> np.ndarray:
        """Matched count of each nugget from its overlap: 0/1 (threshold) or the overlap (fraction)."""
        if self.match == "fraction":
            return np.asarray(overlaps, dtype=float)
        return (np.asarray(overlaps) >= self.threshold).astype(float)

    def signature_fields(self) -> dict:
        return {"matcher": "term-overlap", "match": self.match,
                "threshold": self.threshold if self.match == "threshold" else None,
                "stem": self.stem, "stopwords": "smart"}
