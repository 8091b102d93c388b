"""Which fast kernel computes each metric pair of a permutation test, and why (the kernels' route table)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..stats.significance.pair_permutations import explain_pairs

__all__ = ["RouteReport", "explain_routes"]


@dataclass(frozen=True)
class RouteReport:
    """The route of every metric pair (:func:`explain_routes`).

    Attributes
    ----------
    metrics : tuple of str
        The metrics, in the order of the pairs.
    routing : metaeval.stats.kernels.routes.PairRouting
        The case the routes read, the verdict of every route of the table, each pair's route and kernel.
    """

    metrics: tuple
    routing: Any

    def text(self) -> str:
        """The routes tried with their verdicts, then the route and kernel of each pair."""
        return self.routing.text(self.metrics)

    def to_frame(self):
        """One row per pair: ``x``, ``y``, ``route``, ``kernel``."""
        import pandas as pd

        return pd.DataFrame(self.routing.rows(self.metrics), columns=["x", "y", "route", "kernel"])


def explain_routes(ds, metrics, human, *, level: str = defaults.LEVEL, coefficient: str = defaults.COEFFICIENT,
                   method: str = defaults.RESAMPLING_METHOD,
                   tie_tolerance: float = defaults.TIE_TOLERANCE) -> RouteReport:
    """Which route of the kernels' route table computes each pair of ``compare_metrics(..., test='permutation')``.

    Reads the same matrices as :func:`metaeval.compare_metrics` (the cells of each metric at the level) and asks
    :func:`metaeval.stats.kernels.routes.choose_pair_routes`; nothing is resampled, and the numbers of a test do
    not depend on this call. The route table itself: ``print(metaeval.stats.kernels.routes.route_table())``;
    docs/statistics.md, "Which kernel computes a pair".

    Parameters
    ----------
    ds : ScoreSet
    metrics : list of str
        At least two metrics.
    human : str
    level, coefficient, method : str
        As for :func:`metaeval.compare_metrics`.
    tie_tolerance : float
        The relative tie tolerance (it decides which pairs tie, hence some routes).

    Returns
    -------
    RouteReport
    """
    checked = iv.check_scores(ds, human, metrics, minimum=2)
    metrics = checked.metrics
    level = iv.check_level(level)
    coefficient = iv.check_coefficient(coefficient)
    method = iv.check_method(method)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    iv.check_level_design(checked.ds, level)
    checked = checked.scored(None)
    scores = np.stack([checked.metric_matrix(m, "cells") for m in metrics])
    routing = explain_pairs(scores, checked.human_matrix(), level=level, coefficient=coefficient, method=method,
                            rtol=rtol)
    return RouteReport(tuple(metrics), routing)
