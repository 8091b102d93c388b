"""A MoverScore-style word mover similarity (Zhao et al. 2019) over contextual token embeddings.

The candidate and the reference are two weighted point clouds: their tokens' unit-norm embeddings from one
layer of a local model (:class:`.embedding.LocalEncoder`), with weights ``a_i`` and ``b_j`` (uniform, or
idf computed from ``idf_references``), each normalized to sum to 1. The earth mover's distance

``EMD = min_F sum_ij F_ij ||x_i - y_j||_2`` subject to ``F >= 0``, ``sum_j F_ij = a_i``, ``sum_i F_ij = b_j``

is solved exactly as a linear program (``scipy.optimize.linprog``, HiGHS), and the score is
``1 - EMD`` (1 for identical texts; distances between unit vectors lie in ``[0, 2]``). With several
references the best (highest) score is kept.

Differences from the original MoverScore: any local model and layer (the original uses BERT fine-tuned on
MNLI with the last five layers power-mean aggregated), unigrams only, and no stopword or sub-word removal;
the scores are therefore "MoverScore-style", not the published MoverScore numbers.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..signature import Signature
from ._inputs import warn_degenerate
from .bertscore import EmbeddingScorer

__all__ = ["MoverScore", "earth_movers_distance"]


def earth_movers_distance(a: np.ndarray, b: np.ndarray, cost: np.ndarray) -> float:
    """Exact EMD between weights ``a (n,)`` and ``b (m,)`` (equal sums) with ``cost (n, m)``, by linear programming."""
    from scipy import sparse
    from scipy.optimize import linprog

    n, m = cost.shape
    # row sums (n constraints) and column sums but the last (redundant: both sides sum to 1)
    rows = np.concatenate([np.repeat(np.arange(n), m), n + np.tile(np.arange(m - 1), n)])
    cols = np.concatenate([np.arange(n * m), (np.arange(n)[:, None] * m + np.arange(m - 1)).ravel()])
    a_eq = sparse.csr_array((np.ones(len(rows)), (rows, cols)), shape=(n + m - 1, n * m))
    result = linprog(cost.ravel(), A_eq=a_eq, b_eq=np.concatenate([a, b[:-1]]), bounds=(0, None), method="highs")
    if result.status != 0:  # pragma: no cover - a transport problem always has a solution
        return math.nan
    return float(result.fun)


class MoverScore(EmbeddingScorer):
    """``1 - EMD`` between the candidate's and the reference's token embeddings (see the module docstring).

    Parameters
    ----------
    model_dir, layer, idf, idf_references, batch_size, num_threads, device, max_length
        As for :class:`~metaeval.metrics.bertscore.BertScore`.

    References
    ----------
    .. [1] W. Zhao, M. Peyrard, F. Liu, Y. Gao, C. M. Meyer, S. Eger, "MoverScore: Text Generation Evaluating
       with Contextualized Embeddings and Earth Mover Distance", EMNLP 2019.
    """

    name = "moverscore"
    label = "MoverScore"

    @property
    def signature(self) -> Signature:
        return self._signature(distance="euclidean-unit", solver="exact-lp", references="best")

    def __repr__(self) -> str:
        return f"MoverScore(model_dir={str(self.encoder.model_dir)!r}, layer={self.encoder.layer}, idf={self.idf})"

    def _nan(self) -> dict[str, Any]:
        return {"moverscore": math.nan}

    def _pair(self, c_ids, c_emb, r_ids, r_emb) -> float:
        a, b = self._weights(c_ids), self._weights(r_ids)
        if a.sum() <= 0 or b.sum() <= 0:
            warn_degenerate(
                "`idf_references` must give some token of each text a weight > 0 for MoverScore to be defined; got "
                "a text whose word pieces occur in every idf reference (score is NaN)."
            )
            return math.nan
        from scipy.spatial.distance import cdist

        cost = cdist(c_emb, r_emb)
        return 1.0 - earth_movers_distance(a / a.sum(), b / b.sum(), cost)

    def _best(self, per_ref: list) -> dict[str, Any]:
        finite = [s for s in per_ref if not math.isnan(s)]
        return {"moverscore": max(finite) if finite else math.nan}
