"""QARLA's probabilities QUEEN, KING and JACK from similarity arrays (Amigo et al. 2005).

QARLA evaluates automatic summaries (*peers*) by their similarity to human summaries (*models*) under a
set ``X`` of similarity metrics ``x(u, v)`` ("the similarity of v to u"), without human judgments. Here
every function takes the similarities of one or more test cases as numpy arrays; which metric computed
them (ROUGE, inverted ROUGE, TVM, ...) does not matter, and only the ORDER of the values of each metric
is used, so any increasing transform of a metric gives the same QUEEN, KING and JACK.

Layout: ``sim`` has shape ``(X, T, K, K)`` for ``X`` metrics and ``T`` test cases over ``K = P + M``
texts per test case, the ``P`` peers first and the ``M`` models after them; ``sim[x, t, u, v]`` is
``x(u, v)``. The diagonal (a text with itself) is never read.

Definitions (the sample spaces are this module's decisions, documented in docs/qarla.md):

- ``QUEEN_{X,M}(c) = P_{(m, m', m'')}(for all x in X: x(c, m) >= x(m', m''))`` over the ordered triples of
  pairwise distinct models of ``M`` (``M (M-1) (M-2)`` triples);
- a model's QUEEN is computed with itself left out: ``QUEEN_{M-{m},X}(m)``;
- ``KING_{M,A}(X) = P_m(for all a in A: QUEEN_{M-{m},X}(m) > QUEEN_{M-{m},X}(a))``, over the models ``m``
  (and the test cases), the peers scored with the same ``M - {m}`` as the model;
- ``JACK(X, M, A) = P_m(exists a != a' in A: for all x in X: x(a, a') <= x(a, m) and x(a', a) <= x(a', m),
  and QUEEN(a) > 0 and QUEEN(a') > 0)``, over the models ``m`` (and the test cases), QUEEN with all of ``M``.

References
----------
.. [1] E. Amigo, J. Gonzalo, A. Penas and F. Verdejo, "Evaluating DUC 2004 Tasks with the QARLA
   Framework", Proceedings of the ACL Workshop on Intrinsic and Extrinsic Evaluation Measures for MT
   and/or Summarization, 2005.
.. [2] E. Amigo, J. Gonzalo, A. Penas and F. Verdejo, "QARLA: a Framework for the Evaluation of Text
   Summarization Systems", Proceedings of ACL 2005.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval.errors import ParameterError

__all__ = ["QarlaArrays", "jack", "king", "qarla_arrays", "queen", "queen_leave_one_out", "triple_weights"]

MIN_MODELS = 3
"""QUEEN needs one triple of distinct models."""

MIN_MODELS_KING = 4
"""KING leaves one model out and needs a triple of distinct models among the others."""


def triple_weights(n_models: int, *, leave_out: bool) -> np.ndarray:
    """0/1 weights of the model triples ``(m, m', m'')`` of the sample space.

    Returns ``(1, M, M, M)`` (pairwise distinct triples) or, with ``leave_out``, ``(M, M, M, M)``: row
    ``k`` keeps the distinct triples that do not contain model ``k``.
    """
    idx = np.arange(n_models)
    a, b, c = np.meshgrid(idx, idx, idx, indexing="ij")
    distinct = (a != b) & (a != c) & (b != c)
    if not leave_out:
        return distinct[None].astype(np.float64)
    k = idx[:, None, None, None]
    return (distinct[None] & (a[None] != k) & (b[None] != k) & (c[None] != k)).astype(np.float64)


def _check_sim(sim, n_peers, minimum_models):
    sim = np.asarray(sim, dtype=np.float64)
    if sim.ndim != 4 or sim.shape[2] != sim.shape[3] or sim.shape[0] < 1 or sim.shape[1] < 1:
        raise ParameterError(f"`sim` must be an array of shape (metrics, test cases, texts, texts); got shape "
                             f"{sim.shape}.")
    integer = isinstance(n_peers, (int, np.integer)) and not isinstance(n_peers, bool)
    if not integer or not 1 <= n_peers <= sim.shape[2] - minimum_models:
        raise ParameterError(f"`n_peers` must be an integer from 1 to texts - {minimum_models} = "
                             f"{sim.shape[2] - minimum_models}; got {n_peers!r}.")
    off = ~np.eye(sim.shape[2], dtype=bool)
    if not np.isfinite(sim[..., off]).all():
        raise ParameterError("`sim` must hold finite similarities off its diagonal; got NaN or infinity.")
    return sim, int(n_peers)


def _passes(cand_model: np.ndarray, model_model: np.ndarray) -> np.ndarray:
    """(T, C, M, M, M) bool: for all x, ``x(c, m) >= x(m', m'')``."""
    out = None
    for x in range(cand_model.shape[0]):
        ok = cand_model[x][:, :, :, None, None] >= model_model[x][:, None, None, :, :]
        out = ok if out is None else out & ok
    return out


def queen(sim, n_peers: int) -> np.ndarray:
    """QUEEN of every text of every test case over the distinct model triples of all the models.

    Parameters
    ----------
    sim : array_like
        ``(X, T, K, K)`` similarities (module docstring).
    n_peers : int
        ``P``: the first ``P`` texts are peers, the other ``M = K - P >= 3`` are models.

    Returns
    -------
    numpy.ndarray
        ``(T, K)`` ``QUEEN_{X,M}(c)`` in [0, 1]. A model's value here includes triples that contain the
        model itself (its self-similarity); use :func:`queen_leave_one_out` for models.
    """
    sim, p = _check_sim(sim, n_peers, MIN_MODELS)
    return _queens(sim, p, leave_out=False)[0]


def queen_leave_one_out(sim, n_peers: int) -> np.ndarray:
    """QUEEN of every text with each model ``k`` left out of the model set.

    Parameters
    ----------
    sim : array_like
        ``(X, T, K, K)`` similarities.
    n_peers : int
        ``P``; ``M = K - P >= 4``.

    Returns
    -------
    numpy.ndarray
        ``(T, M, K)``: ``[t, k, c] = QUEEN_{M-{k},X}(c)``; ``[t, k, P + k]`` is model ``k``'s own QUEEN.
    """
    sim, p = _check_sim(sim, n_peers, MIN_MODELS_KING)
    return _queens(sim, p, full=False)[1]


CHUNK_ELEMENTS = 1 << 22
"""Test cases are processed in chunks of about this many (text, model triple) tests, bounding memory."""


def _queens(sim: np.ndarray, p: int, *, full: bool = True, leave_out: bool = True):
    """QUEEN over all the models ``(T, K)`` and with each model left out ``(T, M, K)`` (None when not asked).

    The QUEEN test of every text against every model triple is a 0/1 array ``(T, K, M**3)``; each QUEEN is
    its product with the 0/1 weights of the triples of the sample space, divided by their number.
    """
    t_all, k = sim.shape[1], sim.shape[2]
    m = k - p
    w_all = triple_weights(m, leave_out=False)[0].reshape(-1)
    w_loo = triple_weights(m, leave_out=True).reshape(m, -1) if leave_out else None
    q_all = np.empty((t_all, k)) if full else None
    q_loo = np.empty((t_all, m, k)) if leave_out else None
    step = max(1, CHUNK_ELEMENTS // (k * m ** 3))
    for start in range(0, t_all, step):
        part = sim[:, start:start + step]
        passes = _passes(part[:, :, :, p:], part[:, :, p:, p:])
        passes = passes.reshape(passes.shape[0], k, -1).astype(np.float64)
        if full:
            q_all[start:start + step] = passes @ w_all / w_all.sum()
        if leave_out:
            q_loo[start:start + step] = np.transpose(passes @ w_loo.T / w_loo.sum(axis=1), (0, 2, 1))
    return q_all, q_loo


def king(sim, n_peers: int) -> tuple[np.ndarray, np.ndarray]:
    """KING's events: does the left-out model beat every peer?

    Parameters
    ----------
    sim : array_like
        ``(X, T, K, K)`` similarities.
    n_peers : int
        ``P``; ``M = K - P >= 4``.

    Returns
    -------
    success : numpy.ndarray
        ``(T, M)`` bool: ``QUEEN_{M-{m}}(m) > max_a QUEEN_{M-{m}}(a)``; KING is its mean.
    tied : numpy.ndarray
        ``(T, M)`` bool: the model's QUEEN equals the best peer's (a failure, since the paper's ``>``
        is strict; counted for the record).
    """
    sim, p = _check_sim(sim, n_peers, MIN_MODELS_KING)
    m = sim.shape[2] - p
    q = _queens(sim, p, full=False)[1]
    own = q[:, np.arange(m), p + np.arange(m)]
    best_peer = q[:, :, :p].max(axis=2)
    return own > best_peer, own == best_peer


def jack(sim, n_peers: int, queen_peers=None) -> np.ndarray:
    """JACK's events: for each model, is there a pair of peers closer to it than to each other?

    Parameters
    ----------
    sim : array_like
        ``(X, T, K, K)`` similarities.
    n_peers : int
        ``P >= 2``; ``M = K - P >= 3``.
    queen_peers : array_like, optional
        ``(T, P)`` the peers' QUEEN (computed from ``sim`` when omitted).

    Returns
    -------
    numpy.ndarray
        ``(T, M)`` bool: ``exists a != a': for all x: x(a, a') <= x(a, m) and x(a', a) <= x(a', m)``, with
        ``QUEEN(a) > 0`` and ``QUEEN(a') > 0``; JACK is its mean.
    """
    sim, p = _check_sim(sim, n_peers, MIN_MODELS)
    if p < 2:
        raise ParameterError(f"`n_peers` must be at least 2 for JACK (a pair of peers); got {p}.")
    q = _queens(sim, p, leave_out=False)[0][:, :p] if queen_peers is None else np.asarray(queen_peers, dtype=np.float64)
    return _jack_events(sim, p, q)


def _jack_events(sim: np.ndarray, p: int, queen_peers: np.ndarray, n_used: int | None = None) -> np.ndarray:
    n_used = p if n_used is None else n_used
    ok = None
    for x in range(sim.shape[0]):
        step = sim[x][:, :n_used, :n_used, None] <= sim[x][:, :n_used, None, p:]  # (T, a, a', m)
        ok = step if ok is None else ok & step
    pair = ok & np.transpose(ok, (0, 2, 1, 3))
    positive = queen_peers[:, :n_used] > 0
    pair &= (positive[:, :, None] & positive[:, None, :])[..., None]
    pair &= ~np.eye(n_used, dtype=bool)[None, :, :, None]
    return pair.any(axis=(1, 2))


@dataclass(frozen=True)
class QarlaArrays:
    """QUEEN, KING and JACK of one metric set over every test case (arrays; see :func:`qarla_arrays`).

    Attributes
    ----------
    queen_peers : numpy.ndarray
        ``(T, P)`` each peer's QUEEN over all the models.
    queen_models : numpy.ndarray
        ``(T, M)`` each model's QUEEN over the other models.
    king_success, king_tied : numpy.ndarray
        ``(T, M)`` KING's events (:func:`king`).
    jack_success : numpy.ndarray
        ``(T, M)`` JACK's events (:func:`jack`).
    jack_curve : numpy.ndarray
        ``(P - 1,)`` JACK with the first 2, 3, ..., P peers (the paper's Figure 3).
    """

    queen_peers: np.ndarray
    queen_models: np.ndarray
    king_success: np.ndarray
    king_tied: np.ndarray
    jack_success: np.ndarray
    jack_curve: np.ndarray

    @property
    def king(self) -> float:
        return float(self.king_success.mean())

    @property
    def jack(self) -> float:
        return float(self.jack_success.mean())


def qarla_arrays(sim, n_peers: int) -> QarlaArrays:
    """QUEEN of peers and models, KING and JACK of the metric set whose similarities are ``sim``.

    Parameters
    ----------
    sim : array_like
        ``(X, T, K, K)`` similarities of the ``X`` metrics of the set (module docstring).
    n_peers : int
        ``P >= 2``; ``M = K - P >= 4``.

    Returns
    -------
    QarlaArrays
    """
    sim, p = _check_sim(sim, n_peers, MIN_MODELS_KING)
    if p < 2:
        raise ParameterError(f"`n_peers` must be at least 2 for JACK (a pair of peers); got {p}.")
    m = sim.shape[2] - p
    q_all, q_loo = _queens(sim, p)
    own = q_loo[:, np.arange(m), p + np.arange(m)]
    best_peer = q_loo[:, :, :p].max(axis=2)
    queen_peers = q_all[:, :p]
    curve = np.array([_jack_events(sim, p, queen_peers, n_used=k).mean() for k in range(2, p + 1)])
    return QarlaArrays(queen_peers=queen_peers, queen_models=own, king_success=own > best_peer,
                       king_tied=own == best_peer, jack_success=_jack_events(sim, p, queen_peers),
                       jack_curve=curve)
