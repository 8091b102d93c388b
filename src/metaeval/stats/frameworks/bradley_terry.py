"""Bradley-Terry maximum likelihood on per-pair counts, batched over resamples (arrays in, arrays out).

Part of the stats engine (numpy and scipy only, nothing from the rest of metaeval): the judges wing
(:mod:`metaeval.judges.ranking`, :mod:`metaeval.judges.agreement`) turns comparisons into counts and draws
resampled counts with :mod:`metaeval.stats.resampling.pair_counts`.

The data of a ranking reduce to counts per unordered system pair ``(i, j)``, ``i < j``: ``c[..., p, 0]``
comparisons won by i, ``c[..., p, 1]`` won by j, ``c[..., p, 2]`` ties. Every bootstrap resample is another
count array of the same shape, so one batched Newton iteration fits the point estimate and all resamples.

Models (``s`` the log-strengths, ``d = s_i - s_j``, ``n`` the comparisons of the pair):

``'half'`` (ties as half a win each, as Chatbot Arena and Evalica count them)
    ``l = sum_p w_ij d - n log(1 + e^d)`` with ``w_ij = c0 + c2 / 2`` (Bradley & Terry 1952).
``'drop'``
    The same with ties left out: ``w_ij = c0``, ``n = c0 + c1``.
``'davidson'`` (Davidson 1970)
    ``P(i wins) = e^(d/2) / Z``, ``P(j wins) = e^(-d/2) / Z``, ``P(tie) = nu / Z``,
    ``Z = e^(d/2) + e^(-d/2) + nu``; ``nu = e^lambda`` is fitted with ``s``.

An optional Gaussian prior adds ``-regularization * sum_i s_i^2`` (choix's ``alpha``). Without it the
likelihood is invariant to a common shift of ``s``: the last system is held at 0 while fitting and the
scores are then centred (mean 0). The maximum exists when the graph with an edge ``i -> j`` wherever i
earned some win weight against j is strongly connected (Ford 1957, Zermelo 1929); :func:`diverging`
checks it, since a system that never loses would otherwise run off to an infinite score.

Newton's method with step halving; the gradient and Hessian are sums over pairs, built with one
sparse incidence-matrix product, and every resample's system is solved in one batched ``numpy.linalg.solve``.

References
----------
Bradley, R. A. and Terry, M. E. (1952). Rank analysis of incomplete block designs: I. The method of paired
comparisons. Biometrika 39(3/4), 324-345.
Davidson, R. R. (1970). On extending the Bradley-Terry model to accommodate ties in paired comparison
experiments. Journal of the American Statistical Association 65(329), 317-328.
Ford, L. R. (1957). Solution of a ranking problem from binary comparisons. The American Mathematical
Monthly 64(8), 28-33.
Hunter, D. R. (2004). MM algorithms for generalized Bradley-Terry models. The Annals of Statistics 32(1),
384-406.
"""
from __future__ import annotations

import numpy as np

BT_MODELS = ("half", "drop", "davidson")
MAX_ITERATIONS = 100
TOLERANCE = 1e-10


def pairs_of(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every unordered pair ``(i, j)``, ``i < j``, of ``n`` systems, in row-major order."""
    i, j = np.triu_indices(n, k=1)
    return i.astype(np.int64), j.astype(np.int64)


def _weights(counts: np.ndarray, model: str) -> tuple[np.ndarray, np.ndarray]:
    """Win weight of the first system of each pair and the pair's total, for the binary models."""
    c = counts.astype(np.float64, copy=False)
    if model == "half":
        return c[..., 0] + 0.5 * c[..., 2], c.sum(axis=-1)
    return c[..., 0], c[..., 0] + c[..., 1]


def diverging(counts: np.ndarray, i: np.ndarray, j: np.ndarray, n: int, model: str) -> np.ndarray:
    """Which count arrays (leading axes) have no finite maximum-likelihood estimate.

    ``counts`` (..., P, 3). The estimate is finite iff, within each connected component of the comparison
    graph, the graph of 'earned win weight' edges is strongly connected (ties give both directions except
    under ``'drop'``). Returns a boolean array of the leading shape.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    c = np.asarray(counts)
    lead = c.shape[:-2]
    flat = c.reshape(-1, c.shape[-2], 3)
    out = np.zeros(flat.shape[0], dtype=bool)
    ties_link = model != "drop"
    for b in range(flat.shape[0]):
        cb = flat[b]
        fwd = (cb[:, 0] > 0) | (ties_link & (cb[:, 2] > 0))
        bwd = (cb[:, 1] > 0) | (ties_link & (cb[:, 2] > 0))
        rows = np.concatenate([i[fwd], j[bwd]])
        cols = np.concatenate([j[fwd], i[bwd]])
        graph = csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
        used = (cb.sum(axis=1) > 0) if model != "drop" else (cb[:, 0] + cb[:, 1] > 0)
        weak_rows = np.concatenate([i[used], j[used]])
        weak_cols = np.concatenate([j[used], i[used]])
        weak = csr_matrix((np.ones(weak_rows.size), (weak_rows, weak_cols)), shape=(n, n))
        n_weak, _ = connected_components(weak, directed=False)
        n_strong, _ = connected_components(graph, directed=True, connection="strong")
        out[b] = n_strong != n_weak
    return out.reshape(lead)


def _prepared(counts: np.ndarray, model: str) -> tuple[np.ndarray, ...]:
    """The per-pair sufficient statistics of ``model``: (w, n) for the binary models, (c0 - c1, c2, n) for
    Davidson's; each (B, P)."""
    c = np.asarray(counts, dtype=np.float64)
    if model == "davidson":
        return c[..., 0] - c[..., 1], c[..., 2], c.sum(axis=-1)
    return _weights(c, model)


def _loglik(d, lam, stats, model):
    """Per-pair log-likelihood (B, P)."""
    if model == "davidson":
        diff, ties, n = stats
        half = 0.5 * d
        m = np.maximum(np.abs(half), lam[:, None])
        logz = m + np.log(np.exp(half - m) + np.exp(-half - m) + np.exp(lam[:, None] - m))
        return diff * half + ties * lam[:, None] - n * logz
    w, n = stats
    return w * d - n * np.logaddexp(0.0, d)


def _derivatives(d, lam, stats, model):
    """Per-pair gradient in d (and lambda) and second derivatives, each (B, P) (None where not used)."""
    if model == "davidson":
        diff, ties, n = stats
        half = 0.5 * d
        m = np.maximum(np.abs(half), lam[:, None])  # stable exponentials
        ep, em, en = np.exp(half - m), np.exp(-half - m), np.exp(lam[:, None] - m)
        z = ep + em + en
        pi, pj, pt = ep / z, em / z, en / z
        gd = 0.5 * diff - 0.5 * n * (pi - pj)
        gl = ties - n * pt
        hdd = -0.25 * n * ((pi + pj) - (pi - pj) ** 2)
        hll = -n * pt * (1.0 - pt)
        hdl = 0.5 * n * (pi - pj) * pt
        return gd, gl, hdd, hll, hdl
    w, n = stats
    with np.errstate(over="ignore"):  # exp(-d) = inf gives p = 0, the limit
        p = np.exp(np.negative(d, out=d), out=d)  # d is a temporary of the caller
    p += 1.0
    np.reciprocal(p, out=p)  # the logistic function of d
    np_ = n * p
    grad = w - np_
    p -= 1.0
    np_ *= p  # -n p (1 - p)
    return grad, None, np_, None, None


def log_likelihood(scores, counts, i, j, *, model: str, nu=None, regularization: float = 0.0) -> np.ndarray:
    """The (penalised) log-likelihood of ``scores`` (B, n) for ``counts`` (B, P, 3)."""
    s = np.atleast_2d(scores)
    lam = np.log(np.atleast_1d(nu)) if model == "davidson" else np.zeros(s.shape[0])
    c = np.asarray(counts, dtype=np.float64).reshape(s.shape[0], -1, 3)
    ll = _loglik(s[:, i] - s[:, j], lam, _prepared(c, model), model)
    return ll.sum(axis=-1) - regularization * (s ** 2).sum(axis=-1)


def fit(counts, i, j, n: int, *, model: str = "half", regularization: float = 0.0, start=None,
        start_nu=None, max_iterations: int = MAX_ITERATIONS, tolerance: float = TOLERANCE):
    """Maximum-likelihood (or MAP) log-strengths of ``n`` systems from per-pair counts.

    Parameters
    ----------
    counts : array_like, shape (B, P, 3) or (P, 3)
        Counts of pair ``p = (i[p], j[p])``: i wins, j wins, ties. Every system must be in some pair with
        a count, and the caller must have checked :func:`diverging` (or set ``regularization > 0``).
    i, j : ndarray of int, shape (P,)
    model : {'half', 'drop', 'davidson'}
    regularization : float >= 0
        Gaussian prior: ``-regularization * |s|^2`` is added to the log-likelihood.
    start, start_nu : array_like, optional
        Warm start (B, n) / (B,) (e.g. the point estimate for every bootstrap resample).

    Returns
    -------
    scores : ndarray, shape (B, n) (or (n,))
        Centred log-strengths (mean 0) when ``regularization == 0``.
    nu : ndarray, shape (B,) (or scalar); NaN unless ``model == 'davidson'``.
    iterations : int
    converged : ndarray of bool, shape (B,)
    """
    c = np.asarray(counts, dtype=np.float64)
    single = c.ndim == 2
    c = c[None] if single else c
    B, P = c.shape[0], c.shape[1]
    dav = model == "davidson"
    s = np.zeros((B, n)) if start is None else np.array(np.broadcast_to(start, (B, n)), dtype=np.float64)
    if dav:
        if start_nu is None:
            ties = c[..., 2].sum(axis=-1)
            total = np.maximum(c.sum(axis=(-1, -2)), 1.0)
            share = np.clip(ties / total, 1e-3, 0.9)
            lam = np.log(2.0 * share / (1.0 - share))  # at d = 0: P(tie) = nu / (2 + nu)
        else:
            lam = np.log(np.array(np.broadcast_to(start_nu, (B,)), dtype=np.float64))
    else:
        lam = np.zeros(B)
    free = n if regularization > 0 else n - 1  # without a prior the last system is held at 0
    if regularization == 0:
        s = s - s[:, -1:]
    size = free + (1 if dav else 0)
    from scipy.sparse import csr_matrix

    rows = np.concatenate([np.arange(P), np.arange(P)])
    incidence = csr_matrix((np.concatenate([np.ones(P), -np.ones(P)]), (rows, np.concatenate([i, j]))), shape=(P, n))
    to_systems = incidence.T.tocsr()  # (n, P): a pair's value to its first system (+) and second (-)
    to_free = abs(incidence).T.tocsr()[:free]  # (free, P): a pair's value to both of its systems

    def per_system(values, matrix):  # (B, P) -> (B, rows of matrix), 2 P multiply-adds per resample
        return np.asarray(matrix @ values.T).T
    inner = np.flatnonzero(j < free)  # pairs with both systems free: the off-diagonal Hessian entries
    ii, jj = i[inner], j[inner]

    stats = _prepared(c, model)

    def objective(s_, lam_, rows):
        ll = _loglik(s_[:, i] - s_[:, j], lam_, tuple(v[rows] for v in stats), model).sum(axis=-1)
        return ll - regularization * (s_ ** 2).sum(axis=-1)

    converged = np.zeros(B, dtype=bool)
    iterations = 0
    active = np.arange(B)
    for iterations in range(1, max_iterations + 1):
        every = active.size == B
        sa, la = s[active], lam[active]
        sub = stats if every else tuple(v[active] for v in stats)
        gd, gl, hdd, hll, hdl = _derivatives(sa[:, i] - sa[:, j], la, sub, model)
        grad_s = per_system(gd, to_systems) - 2.0 * regularization * sa
        # Hessian in s: sum_p hdd_p (e_i - e_j)(e_i - e_j)^T: -hdd off the diagonal, sum of hdd on it
        hs = np.zeros((active.size, free, free))  # built at the size of the free systems only
        hs[:, np.arange(free), np.arange(free)] = per_system(hdd, to_free) - 2.0 * regularization
        off = -hdd[:, inner]
        hs[:, ii, jj] = off
        hs[:, jj, ii] = off
        gs = grad_s[:, :free]
        if dav:
            cross = per_system(hdl, to_systems)[:, :free]  # d^2 l / ds dlambda
            full = np.zeros((active.size, size, size))
            full[:, :free, :free] = hs
            full[:, :free, free] = cross
            full[:, free, :free] = cross
            full[:, free, free] = hll.sum(axis=-1)
            g = np.concatenate([gs, gl.sum(axis=-1)[:, None]], axis=1)
        else:
            full, g = hs, gs
        diag = np.arange(size)
        full[:, diag, diag] -= 1e-12 * (1.0 + np.abs(full[:, diag, diag]))
        step = -np.linalg.solve(full, g[..., None])[..., 0]
        t = np.ones(active.size)
        # a long step (far from the optimum, e.g. the point fit from 0) is halved until the objective rises;
        # the short steps of warm-started resamples are taken whole (Newton's local quadratic convergence)
        far = np.flatnonzero(np.max(np.abs(step), axis=1) > 0.5)
        if far.size:
            sf, lf = sa[far], la[far]
            base = objective(sf, lf, active[far])
            tf = np.ones(far.size)
            for _ in range(60):
                trial_s = sf.copy()
                trial_s[:, :free] += tf[:, None] * step[far, :free]
                trial_l = lf + tf * step[far, free] if dav else lf
                worse = ~(objective(trial_s, trial_l, active[far]) >= base - 1e-12 * np.abs(base))
                if not worse.any():
                    break
                tf = np.where(worse, 0.5 * tf, tf)
            t[far] = tf
        new_s = sa.copy()
        new_s[:, :free] += t[:, None] * step[:, :free]
        s[active] = new_s
        if dav:
            lam[active] = la + t * step[:, free]
        size_step = np.max(np.abs(t[:, None] * step), axis=1)
        done = size_step < tolerance * (1.0 + np.max(np.abs(new_s), axis=1))
        converged[active[done]] = True
        active = active[~done]
        if active.size == 0:
            break
    if regularization == 0:
        s = s - s.mean(axis=1, keepdims=True)
    nu = np.exp(lam) if dav else np.full(B, np.nan)
    if single:
        return s[0], float(nu[0]), iterations, converged
    return s, nu, iterations, converged
