"""QARLA's similarity metrics between two summaries: ROUGE with one model, inverted ROUGE (Rpre), TVM_n.

Amigo, Gonzalo, Penas & Verdejo (ACL-05 workshop, Sec. 3.1) turn evaluation metrics into similarities
``x(u, v)`` ("the similarity of v to u") between any two summaries:

- ``rouge-<m>``: ROUGE-1.5.5 (:class:`metaeval.metrics.Rouge`) with ``u`` as the candidate and ``v`` as the
  only model, its RECALL (ROUGE is recall oriented); ``<m>`` is ``1``-``4``, ``l``, ``w-1.2``, ``s4``, ``su4``;
- ``rpre-<m>``: inverted ROUGE, ``Rpre(u, v) = R(v, u)`` (precision oriented);
- ``tvm-<n>``: TruncatedVectModel, the inverse of the Euclidean distance between the relative frequencies
  in ``u`` and ``v`` of the ``n`` most frequent terms (Porter stems of non-stopwords) of the test case's
  source documents; here ``1 / (1 + distance)`` (finite for identical vectors; QARLA only uses the order).

The paper's preprocessing types are suffixes of the ROUGE names: ``.a`` none (the default), ``.b``
stopwords removed (``-s``), ``.c`` stopwords removed and stemmed (``-s -m``); e.g. ``rpre-w-1.2.b``.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ParameterError
from ..metrics.rouge import Rouge
from ..metrics.rouge_counts import scores_from_counts
from ..metrics.rouge_tokenize import RougeTokenizer, split_lines

__all__ = ["DEFAULT_SIMILARITIES", "PREPROCESSING", "ROUGE_MEASURES", "canonical_similarity", "similarity_matrices"]

ROUGE_MEASURES = ("1", "2", "3", "4", "l", "w-1.2", "s4", "su4")
"""The ROUGE measures a similarity can use (ROUGE-W with weight 1.2, ROUGE-S/SU with skip distance 4)."""

DEFAULT_SIMILARITIES = ("rouge-1", "rouge-2", "rouge-l", "rouge-su4")
"""The similarities of :func:`metaeval.qarla_similarities` and ``metaeval qarla`` by default."""

PREPROCESSING = {"a": (False, False), "b": (False, True), "c": (True, True)}
"""The paper's types: suffix -> (stem, remove stopwords)."""

_ROUGE_NAME = re.compile(r"^(rouge|rpre)-(1|2|3|4|l|w-1\.2|s4|su4)(?:\.([abc]))?$")
_TVM_NAME = re.compile(r"^tvm-([1-9][0-9]*)$")


def canonical_similarity(name: object) -> str:
    """The canonical name of a similarity (lower case, ROUGE types with their ``.a|.b|.c`` suffix)."""
    if isinstance(name, str):
        low = name.strip().lower()
        match = _ROUGE_NAME.match(low)
        if match:
            return f"{match.group(1)}-{match.group(2)}.{match.group(3) or 'a'}"
        if _TVM_NAME.match(low):
            return low
    raise ParameterError("`similarities` must be names like 'rouge-1', 'rpre-w-1.2.b', 'rouge-su4.c' (ROUGE "
                         f"{', '.join(ROUGE_MEASURES)}; types .a/.b/.c) or 'tvm-64'; got {name!r}.")


def _rouge_scorer(measures: set[str], kind: str) -> Rouge:
    stem, stopwords = PREPROCESSING[kind]
    ngrams = [int(m) for m in measures if m.isdigit()]
    skips = {m for m in measures if m in ("s4", "su4")}
    skip_unigrams = "both" if len(skips) == 2 else ("su4" in skips)
    return Rouge(n=max(ngrams, default=0), stem=stem, remove_stopwords=stopwords, lcs="l" in measures,
                 weight=1.2 if "w-1.2" in measures else None, skip_distance=4 if skips else None,
                 skip_unigrams=skip_unigrams if skips else False)


def _rouge_key(measure: str) -> str:
    return f"rouge-{measure}"


def _rouge_recalls(texts: Sequence[str], scorer: Rouge, measures: list[str]) -> np.ndarray:
    """(len(measures), K, K): ``[i, u, v]`` = recall of measure i with candidate u and the single model v."""
    k = len(texts)
    out = np.empty((len(measures), k, k))
    for u in range(k):
        for v in range(k):
            counts = scorer.statistics(texts[u], [texts[v]]).counts
            for i, measure in enumerate(measures):
                out[i, u, v] = scores_from_counts(counts[_rouge_key(measure)], alpha=0.5,
                                                  rouge155_rounding=False)["recall"]
    return out


_TVM_TOKENIZER: RougeTokenizer | None = None


def _terms(text: str | Sequence[str]) -> list[str]:
    """Porter stems (ROUGE-1.5.5's ``-m``) of the non-stopword tokens (ROUGE-1.5.5's ``-s``) of ``text``."""
    global _TVM_TOKENIZER
    if _TVM_TOKENIZER is None:
        _TVM_TOKENIZER = RougeTokenizer(stem=True, remove_stopwords=True)
    return [t for line in split_lines(text) for t in _TVM_TOKENIZER.tokens(line)]


def tvm_matrix(texts: Sequence[str], source: Sequence[str], n: int) -> np.ndarray:
    """(K, K) TVM_n similarities ``1 / (1 + ||f(u) - f(v)||_2)`` between the texts.

    ``f(s)_j = count of term j in s / number of terms of s`` over the ``n`` most frequent terms of
    ``source`` (ties in frequency broken alphabetically; fewer when the source has fewer terms).
    """
    counts = Counter(t for doc in source for t in _terms(doc))
    top = [term for term, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]]
    vectors = np.zeros((len(texts), len(top)))
    index = {term: j for j, term in enumerate(top)}
    for i, text in enumerate(texts):
        terms = _terms(text)
        for term in terms:
            j = index.get(term)
            if j is not None:
                vectors[i, j] += 1.0
        vectors[i] /= max(len(terms), 1)
    distance = np.sqrt(((vectors[:, None, :] - vectors[None, :, :]) ** 2).sum(axis=2))
    return 1.0 / (1.0 + distance)


def similarity_matrices(texts: Sequence[str], similarities: Sequence[str], *,
                        source: Sequence[str] | None = None) -> np.ndarray:
    """(X, K, K) similarities ``x(u, v)`` between the texts of one test case.

    Parameters
    ----------
    texts : sequence of str
        The ``K`` summaries of a test case (peers and models).
    similarities : sequence of str
        Canonical names (:func:`canonical_similarity`).
    source : sequence of str, optional
        The source documents for TVM; default: the texts themselves pooled (docs/qarla.md, Decisions).

    Returns
    -------
    numpy.ndarray
        ``[x, u, v] = x(u, v)``; the diagonal is a text with itself.
    """
    out = np.empty((len(similarities), len(texts), len(texts)))
    by_kind: dict[str, list[tuple[int, str, str]]] = {}
    for i, name in enumerate(similarities):
        match = _ROUGE_NAME.match(name)
        if match:
            by_kind.setdefault(match.group(3), []).append((i, match.group(1), match.group(2)))
        else:
            out[i] = tvm_matrix(texts, list(texts) if source is None else source, int(name.split("-")[1]))
    for kind, entries in by_kind.items():
        measures = sorted({m for _, _, m in entries})
        recalls = _rouge_recalls(texts, _rouge_scorer(set(measures), kind), measures)
        for i, family, measure in entries:
            r = recalls[measures.index(measure)]
            out[i] = r if family == "rouge" else r.T
    return out


def check_sources(sources: object, inputs: Sequence[str]) -> Mapping[str, list[str]] | None:
    """``sources`` as input -> list of source documents, every input of ``inputs`` present."""
    if sources is None:
        return None
    if not isinstance(sources, Mapping):
        raise ParameterError(f"`sources` must be a mapping input -> source text(s); got {type(sources).__name__}.")
    out = {}
    for label in inputs:
        value = sources.get(label)
        docs = [value] if isinstance(value, str) else value
        if not isinstance(docs, Sequence) or not docs or not all(isinstance(d, str) and d.strip() for d in docs):
            raise ParameterError(f"`sources` must give every input a non-empty text or list of texts; got {value!r} "
                                 f"for {label!r}.")
        out[label] = list(docs)
    return out
