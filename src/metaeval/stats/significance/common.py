"""The common cells of a two-metric test: where metric X, metric Y and the human Z are all present.

Every test of ``rho(X, Z)`` against ``rho(Y, Z)`` (permutation, paired bootstrap, Williams) first keeps
only the cells where the three matrices are present; both correlations, the swaps and the resamples use
those cells only. Otherwise each correlation would rest on its own cells, a metric with more missing
cells could win or lose on different items, and Williams' test would depend on the argument order.
"""
from __future__ import annotations

import numpy as np

__all__ = ["CommonCells", "common_cells", "identical_metrics_message"]


class CommonCells:
    """``x``, ``y``, ``z`` with NaN outside the common cells, and the counts of what was dropped.

    Attributes
    ----------
    x, y, z : ndarray (N, M)
        Copies with NaN wherever any of the three is missing.
    mask : ndarray of bool (N, M)
        The common cells.
    n_cells : int
        Number of common cells.
    n_dropped_x, n_dropped_y : int
        Cells where X (resp. Y) and Z are present but the other metric is missing.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, z: np.ndarray):
        fx, fy, fz = np.isfinite(x), np.isfinite(y), np.isfinite(z)
        self.mask = fx & fy & fz
        self.x = np.where(self.mask, x, np.nan)
        self.y = np.where(self.mask, y, np.nan)
        self.z = np.where(self.mask, z, np.nan)
        self.n_cells = int(self.mask.sum())
        self.n_dropped_x = int((fx & fz & ~fy).sum())
        self.n_dropped_y = int((fy & fz & ~fx).sum())

    @property
    def identical(self) -> bool:
        """True when X and Y are equal on every common cell (then no test can find a difference)."""
        return bool(np.array_equal(self.x, self.y, equal_nan=True))


def common_cells(x, y, z) -> CommonCells:
    """The common cells of ``x``, ``y`` and ``z`` (arrays of one shape), see :class:`CommonCells`."""
    return CommonCells(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64),
                       np.asarray(z, dtype=np.float64))


def identical_metrics_message(n_cells: int) -> str:
    """The one warning text of every two-metric test when the two metrics are identical."""
    return (f"`metric_a` and `metric_b` are identical on the {n_cells} cells where both and the human are"
            " present; there is no difference to test, so the p-value is 1.")
