"""A deliberately degraded metric: ROUGE-1 (recall, precision or F1) on a random k% of each candidate's tokens.

Deutsch, Dror & Roth (2021, Sec. 5.2) measure the power of tests for "metric X correlates better than
metric Y" with a metric that is worse than ROUGE-1 by construction: for each candidate summary, keep a
uniformly random subset of exactly ``floor(p * n)`` of its ``n`` tokens (sampling without replacement), and
score the kept tokens with ROUGE-1 against the references. With ``c_r = sum_w min(kept_w, ref_w^r)`` the
clipped matches with reference ``r`` (``kept_w``: kept tokens of type ``w``; ``ref_w^r``: its count in
``r``) and ``k = floor(p * n)`` the kept tokens, per reference

``R_r = c_r / |ref^r|``,  ``P_r = c_r / k``,  ``F_r = 2 P_r R_r / (P_r + R_r)``

and the score of the variant is its mean over the references (``(1 / |refs|) sum_r R_r`` for recall). This
is the per-reference average of SacreROUGE's simulation code used by Deutsch, Dror & Roth (2021), who
degrade the F1 variant on SummEval and recall on TAC'08 and REALSumm (their footnote 9). A score whose
denominator is 0 (no kept token, an empty reference, ``P_r + R_r = 0``) is 0, as in that code. At
``p = 1`` this is ROUGE-1 itself (with the same tokens).

:class:`DegradedRouge` tokenizes every candidate and reference once; :meth:`DegradedRouge.scores` then
draws the kept-token masks of many trials at once (random keys sorted within each candidate) and turns them
into match counts with one ``bincount``, so no Python loop runs per candidate or per trial.

Tokenization: ``"rouge155"`` uses ROUGE-1.5.5's tokenizer and stemmer (:mod:`metaeval.metrics.rouge_tokenize`,
``-m`` stemming, no stopword removal, as the packaged SummEval / REALSumm ROUGE scores); ``"simple"``
lower-cases and splits on runs of ASCII letters and digits (no stemming). REALSumm's sentence tags
``<t>`` / ``</t>`` are removed first.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ParameterError, check_choice

__all__ = ["ROUGE_VARIANTS", "TOKENIZERS", "DegradedRouge", "tokenize"]

TOKENIZERS = ("rouge155", "simple")
#: The ROUGE-1 variants the degraded metric can score (SacreROUGE's ``--rouge-variant`` plus precision).
ROUGE_VARIANTS = ("recall", "precision", "f1")
_TAGS = re.compile(r"</?t>")
_SIMPLE = re.compile(r"[a-z0-9]+")
#: Random keys held at once, (trials x tokens); bounds memory (float64: about 64 MB).
_CHUNK_CELLS = 8_000_000


def tokenize(text: str, tokenizer: str = "rouge155") -> list[str]:
    """Tokens of ``text`` (sentence tags removed) with the named tokenizer."""
    text = _TAGS.sub("\n", text)
    if tokenizer == "simple":
        return _SIMPLE.findall(text.lower())
    from .rouge_tokenize import RougeTokenizer, split_lines

    rouge = _rouge_tokenizer(RougeTokenizer)
    return [t for line in split_lines(text) for t in rouge.tokens(line)]


_ROUGE: list = []


def _rouge_tokenizer(cls):
    if not _ROUGE:
        _ROUGE.append(cls(stem=True, remove_stopwords=False))
    return _ROUGE[0]


class DegradedRouge:
    """ROUGE-1 (recall, precision or F1) of random subsets of candidate tokens, vectorized over trials.

    Parameters
    ----------
    candidates : sequence of str
        The C candidate summaries (e.g. every system x input cell, flattened).
    references : sequence of sequence of str
        ``references[i]`` holds the reference texts of candidate ``i`` (at least one).
    tokenizer : {'rouge155', 'simple'}
    variant : {'recall', 'precision', 'f1'}
        The ROUGE-1 score of :meth:`full` and :meth:`scores` (default recall).

    Attributes
    ----------
    n_tokens : ndarray of int (C,)
        Tokens per candidate.
    """

    def __init__(self, candidates: Sequence[str], references: Sequence[Sequence[str]], *, tokenizer: str = "rouge155",
                 variant: str = "recall"):
        tokenizer = check_choice("tokenizer", tokenizer, TOKENIZERS)
        self.variant = check_choice("variant", variant, ROUGE_VARIANTS)
        if isinstance(candidates, str) or len(candidates) != len(references):
            raise ParameterError(f"`references` must hold one list of references per candidate; got "
                                 f"{len(references)} lists for {len(candidates)} candidates.")
        self.tokenizer = tokenizer
        cache: dict[str, list[str]] = {}

        def toks(text):
            if text not in cache:
                cache[text] = tokenize(text, tokenizer)
            return cache[text]

        token_ids, owners, ref_counts, ref_owner, ref_len = [], [], [], [], []
        n_refs = np.zeros(len(candidates), dtype=np.int64)
        offset = 0  # global (candidate, type) ids
        for i, (cand, refs) in enumerate(zip(candidates, references)):
            if isinstance(refs, str) or len(refs) == 0:
                raise ParameterError(f"`references[{i}]` must be a non-empty list of texts; got {refs!r}.")
            types: dict[str, int] = {}
            ids = [types.setdefault(t, len(types)) for t in toks(cand)]
            token_ids.append(np.asarray(ids, dtype=np.int64) + offset)
            owners.append(np.full(len(ids), i, dtype=np.int64))
            for ref in refs:
                rt = toks(ref)
                counts = np.zeros(len(types))
                for t in rt:
                    if t in types:
                        counts[types[t]] += 1
                ref_counts.append((offset, counts))
                ref_owner.append(i)
                ref_len.append(len(rt))
            n_refs[i] = len(refs)
            offset += len(types)
        self.n_candidates = len(candidates)
        self.n_types = offset
        self.token_ids = np.concatenate(token_ids) if token_ids else np.zeros(0, dtype=np.int64)
        self.owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
        self.n_tokens = np.bincount(self.owner, minlength=self.n_candidates)
        self.starts = np.concatenate([[0], np.cumsum(self.n_tokens)[:-1]]).astype(np.int64)
        # reference r's counts over the global type ids, one row per reference (R, G) kept sparse per owner
        self.ref_owner = np.asarray(ref_owner, dtype=np.int64)
        self.ref_len = np.asarray(ref_len, dtype=np.float64)
        self.n_refs = n_refs
        self._ref_types = [(o, c) for o, c in ref_counts]
        self._ref_index = self._reference_index()

    def _reference_index(self):
        """Flattened (reference, type) entries with a positive count: type id, count, reference row."""
        gid, cnt, row = [], [], []
        for r, (offset, counts) in enumerate(self._ref_types):
            nz = np.flatnonzero(counts)
            gid.append(nz + offset)
            cnt.append(counts[nz])
            row.append(np.full(nz.size, r, dtype=np.int64))
        if not gid:
            return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
        return np.concatenate(gid), np.concatenate(cnt), np.concatenate(row)

    def n_kept(self, proportion: float) -> np.ndarray:
        """``floor(proportion * n_tokens)`` per candidate."""
        return np.floor(proportion * self.n_tokens + 1e-9).astype(np.int64)

    def scores_from_counts(self, kept_counts: np.ndarray, n_kept: np.ndarray) -> np.ndarray:
        """ROUGE-1 of :attr:`variant` ``(T, C)`` from kept type counts ``(T, G)`` and kept tokens ``(C,)``.

        Clipped matches per reference, the variant per reference, then the mean over references; a
        0 denominator gives 0 (see the module notes).
        """
        gid, cnt, row = self._ref_index
        matched = np.minimum(kept_counts[:, gid], cnt)  # (T, E), entries grouped by reference
        per_ref = _segment_sums(matched, row, len(self.ref_len))  # (T, R)
        recall = per_ref / np.where(self.ref_len > 0, self.ref_len, 1.0)  # matches are 0 for an empty reference
        kept = np.asarray(n_kept, dtype=np.float64)[self.ref_owner]
        precision = per_ref / np.where(kept > 0, kept, 1.0)  # no kept token: no match, precision 0
        if self.variant == "recall":
            value = recall
        elif self.variant == "precision":
            value = precision
        else:
            total = precision + recall
            value = 2 * precision * recall / np.where(total > 0, total, 1.0)
        first = np.concatenate([[0], np.cumsum(self.n_refs)[:-1]])  # every candidate has >= 1 reference
        return np.add.reduceat(value, first, axis=1) / self.n_refs

    def full(self) -> np.ndarray:
        """ROUGE-1 (:attr:`variant`) of the whole candidates, ``(C,)``."""
        counts = np.bincount(self.token_ids, minlength=self.n_types).astype(np.float64)[None]
        return self.scores_from_counts(counts, self.n_tokens)[0]

    def scores(self, proportion: float, n_trials: int, rng: Any) -> np.ndarray:
        """Degraded ROUGE-1 (:attr:`variant`) for ``n_trials`` independent draws: ``(n_trials, C)``.

        Each trial keeps, for every candidate independently, a uniformly random subset of exactly
        ``floor(proportion * n)`` of its ``n`` tokens.
        """
        if not (0.0 < float(proportion) <= 1.0):
            raise ParameterError(f"`proportion` must be a number in (0, 1]; got {proportion!r}.")
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        length = self.token_ids.size
        n_kept = self.n_kept(float(proportion))
        keep = n_kept[self.owner]  # per token: how many of its candidate are kept
        pos = np.arange(length) - self.starts[self.owner]  # position of the token within its candidate
        out = np.empty((n_trials, self.n_candidates))
        chunk = max(1, _CHUNK_CELLS // max(1, length))
        for start in range(0, n_trials, chunk):
            t = min(chunk, n_trials - start)
            keys = gen.random((t, length)) + self.owner  # sort within candidates: owner + U(0, 1)
            order = np.argsort(keys, axis=1, kind="stable")
            kept = np.zeros((t, length), dtype=bool)
            np.put_along_axis(kept, order, (pos < keep)[None, :].repeat(t, axis=0), axis=1)
            # kept[s, order[s, q]] = (q-th token of its candidate in sorted order is among the first n_kept)
            flat = (self.token_ids[None, :] + np.arange(t)[:, None] * self.n_types)[kept]
            counts = np.bincount(flat, minlength=t * self.n_types).reshape(t, self.n_types).astype(np.float64)
            out[start:start + t] = self.scores_from_counts(counts, n_kept)
        return out


def _segment_sums(values: np.ndarray, segment: np.ndarray, size: int) -> np.ndarray:
    """Sums of the columns of ``values`` (T, E) per ``segment`` id (sorted, E) -> (T, size); 0 if empty.

    Exact for integer-valued ``values`` (differences of float64 cumulative sums of integers).
    """
    csum = np.zeros((values.shape[0], values.shape[1] + 1))
    np.cumsum(values, axis=1, out=csum[:, 1:])
    bounds = np.searchsorted(segment, np.arange(size + 1))
    return csum[:, bounds[1:]] - csum[:, bounds[:-1]]
