"""Summary-level LCS and weighted LCS hits of ROUGE-1.5.5 (ROUGE-L and ROUGE-W).

For each model (reference) sentence ``r_i``, ROUGE-1.5.5 computes an LCS with every peer
(candidate) sentence, traces it back and marks the positions of ``r_i`` on it; the union of the
marks is the candidate's coverage of ``r_i``. A marked token is a hit only while its unigram count
is left in both the model and the peer (both counts then drop by one), so the summary-level LCS never
exceeds the unigram overlap.

ROUGE-L: ``hit = sum of accepted marks``; the model total is the number of model tokens.

ROUGE-W (weight ``w``, ``f(k) = k ** w``): the weighted LCS table of Lin (2004),
``c[i][j] = c[i-1][j-1] + f(k + 1) - f(k)`` with ``k`` the length of the run ending at
``(i-1, j-1)``, is traced back the same way; accepted hits are grouped into runs, a run ending when
the next position is unmarked or at the end of the sentence (a run followed only by marks rejected by
the clipping is never closed and counts nothing), and ``hit = sum of f(run length)``. The model
total is ``f(sum_i f(len r_i))`` and the peer total ``f(number of peer tokens)``.

The traceback follows ROUGE-1.5.5: equal tokens go diagonally, otherwise up when
``c[i-1][j] >= c[i][j-1]``, else left. For ROUGE-L the LCS table is computed bit-parallel
(Hyyro 2004): row ``i`` is an integer whose zero bits count ``c[i][j]``.

References
----------
.. [1] C.-Y. Lin, "ROUGE: A Package for Automatic Evaluation of Summaries", Text Summarization
   Branches Out (ACL workshop), 2004.
.. [2] H. Hyyro, "Bit-parallel LCS-length computation revisited", AWOCA 2004.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import accumulate

__all__ = ["PeerSentence", "lcs_hits", "wlcs_hits"]


class PeerSentence:
    """A peer (candidate) sentence with its per-token match masks, built once and reused.

    Parameters
    ----------
    tokens : sequence of str
    """

    __slots__ = ("tokens", "masks", "full", "length")

    def __init__(self, tokens: Sequence[str]):
        self.tokens = tuple(tokens)
        self.length = len(self.tokens)
        self.full = (1 << self.length) - 1
        masks: dict[str, int] = {}
        for j, token in enumerate(self.tokens):
            masks[token] = masks.get(token, 0) | (1 << j)
        self.masks = masks


def _lcs_marks(model: Sequence[str], peer: PeerSentence, marks: list[bool]) -> None:
    """Mark the positions of ``model`` on ROUGE-1.5.5's LCS traceback against ``peer``."""
    masks = peer.masks
    full = peer.full
    row = full
    rows = [row]
    matched = False
    for token in model:
        mask = masks.get(token)
        if mask:
            matched = True
            u = row & mask
            row = ((row + u) | (row - u)) & full
        rows.append(row)
    if not matched or row == full:
        return
    # c[i][j] = number of zero bits among the j lowest bits of rows[i].
    ptokens = peer.tokens
    i, j = len(model), peer.length
    while i and j:
        if model[i - 1] == ptokens[j - 1]:
            i -= 1
            j -= 1
            marks[i] = True
            continue
        low = (1 << j) - 1
        up = j - (rows[i - 1] & low).bit_count()
        left = (j - 1) - (rows[i] & (low >> 1)).bit_count()
        if up >= left:
            i -= 1
        else:
            j -= 1


def lcs_hits(
    model: Sequence[Sequence[str]],
    peer: Sequence[PeerSentence],
    model_counts: Counter,
    peer_counts: Counter,
) -> int:
    """ROUGE-1.5.5's summary-level (union, clipped) LCS hit count of one model.

    Parameters
    ----------
    model : sequence of sequences of str
        The model (reference) sentences, tokenized.
    peer : sequence of PeerSentence
        The peer (candidate) sentences.
    model_counts, peer_counts : collections.Counter
        Unigram counts used for clipping; consumed (pass copies).

    Returns
    -------
    int
    """
    hit = 0
    for sentence in model:
        if not sentence:
            continue
        marks = [False] * len(sentence)
        for p in peer:
            if p.length:
                _lcs_marks(sentence, p, marks)
        for position, token in enumerate(sentence):
            if marks[position] and model_counts[token] > 0 and peer_counts[token] > 0:
                hit += 1
                model_counts[token] -= 1
                peer_counts[token] -= 1
    return hit


def _wlcs_marks(model: Sequence[str], peer: Sequence[str], powers: list[float], marks: list[bool]) -> None:
    """Mark the positions of ``model`` on ROUGE-1.5.5's weighted-LCS traceback against ``peer``.

    ``powers[k] = k ** w``. A row whose model token is absent from ``peer`` is a running maximum
    of the row above (computed with :func:`itertools.accumulate`); the traceback recomputes each
    move from the table as ROUGE-1.5.5 records it.
    """
    n = len(peer)
    present = set(peer)
    if not n or present.isdisjoint(model):
        return
    no_runs = [0] * (n + 1)
    c_prev: list[float] = [0.0] * (n + 1)
    run_prev = no_runs
    table = [c_prev]
    for token in model:
        if token not in present:
            c_prev = [0.0, *accumulate(c_prev[1:], max)]
            run_prev = no_runs
            table.append(c_prev)
            continue
        c_row = [0.0] * (n + 1)
        run_row = [0] * (n + 1)
        for j in range(1, n + 1):
            if token == peer[j - 1]:
                k = run_prev[j - 1]
                # Same operation order as ROUGE-1.5.5 (ties in the traceback depend on it).
                c_row[j] = c_prev[j - 1] + powers[k + 1] - powers[k]
                run_row[j] = k + 1
            elif c_prev[j] >= c_row[j - 1]:
                c_row[j] = c_prev[j]
            else:
                c_row[j] = c_row[j - 1]
        table.append(c_row)
        c_prev, run_prev = c_row, run_row
    i, j = len(model), n
    while i and j:
        if model[i - 1] == peer[j - 1]:
            i -= 1
            j -= 1
            marks[i] = True
        elif table[i - 1][j] >= table[i][j - 1]:
            i -= 1
        else:
            j -= 1


def wlcs_hits(
    model: Sequence[Sequence[str]],
    peer: Sequence[Sequence[str]],
    weight: float,
    model_counts: Counter,
    peer_counts: Counter,
) -> tuple[float, float]:
    """ROUGE-1.5.5's summary-level weighted LCS hit of one model and its base.

    Parameters
    ----------
    model : sequence of sequences of str
        The model (reference) sentences, tokenized.
    peer : sequence of sequences of str
        The peer (candidate) sentences, tokenized.
    weight : float
        The ``-w`` weight factor ``w`` of ``f(k) = k ** w``.
    model_counts, peer_counts : collections.Counter
        Unigram counts used for clipping; consumed (pass copies).

    Returns
    -------
    hit : float
        Sum of ``f(run length)`` over the accepted runs.
    base : float
        ``sum_i f(len r_i)`` over the model sentences (ROUGE-1.5.5 then adds ``f(base)`` to the
        model total).
    """
    hit = 0.0
    base = 0.0
    longest = max((len(p) for p in peer), default=0) + 2
    powers = [k**weight for k in range(longest)]

    for sentence in model:
        length = len(sentence)
        base += length**weight
        if not length:
            continue
        marks = [False] * length
        for p in peer:
            _wlcs_marks(sentence, p, powers, marks)
        run = 0
        for position, token in enumerate(sentence):
            if marks[position] and model_counts[token] > 0 and peer_counts[token] > 0:
                run += 1
                if position + 1 == length or not marks[position + 1]:
                    hit += run**weight
                    run = 0
                model_counts[token] -= 1
                peer_counts[token] -= 1
    return hit, base
