"""Per-rater summary of MQM ratings: how much each rater rated, its mean score, its attention checks.

:func:`mqm_raters` turns :class:`~metaeval.data.mqm_ratings.MQMRatings` into one row per rater: the cells it
rated, its mean MQM score over them (the same weights as the gold ``mqm``), its errors per rated cell, and
its attention checks found and missed (a row with severity ``attention`` and category ``found`` or
``missed``; WMT's MQM releases mark the checks so) with the share found. The per-rater scores themselves
are the scorers ``mqm.<rater>`` of ``ratings.scores`` (``read_mqm_ratings(per_rater=True)``), written with
:func:`metaeval.write_scores` (``metaeval human raters --write-scores``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data.mqm_ratings import HUMAN_NAME, MQMRatings
from ..errors import ParameterError
from ..serialization import RECORDS, ResultMixin
from ..signature import Signature

__all__ = ["MQMRatersResult", "mqm_raters"]


@dataclass(frozen=True)
class MQMRatersResult(ResultMixin):
    """One row per rater of an MQM ratings file.

    Attributes
    ----------
    raters : pandas.DataFrame
        ``rater``, ``cells`` (cells rated), ``mean_mqm`` (mean score over them), ``errors_per_cell`` (target-side
        error spans per rated cell), ``attention_found``, ``attention_missed``, ``attention_rate`` (found /
        (found + missed); NaN without checks); raters seen only in attention checks have ``cells`` 0.
    n_cells : int
        Cells (system, segment) rated by anyone.
    raters_per_cell : float
        Mean number of raters per rated cell.
    signature : Signature
    """

    raters: pd.DataFrame = field(metadata=RECORDS)
    n_cells: int
    raters_per_cell: float
    signature: Signature

    def frame_rows(self):
        return self.raters.to_dict("records")


def mqm_raters(ratings: MQMRatings) -> MQMRatersResult:
    """The per-rater summary of ``ratings`` (module docstring).

    Parameters
    ----------
    ratings : MQMRatings
        What :func:`metaeval.read_mqm_ratings` returns (with ``per_rater`` True or None).

    Returns
    -------
    MQMRatersResult
    """
    if not isinstance(ratings, MQMRatings):
        raise ParameterError(f"`ratings` must be MQMRatings (metaeval.read_mqm_ratings); got {type(ratings).__name__}.")
    ds = ratings.scores
    gold = ds.matrix(HUMAN_NAME)
    rows = []
    counted = np.zeros(gold.shape)
    for rater in dict.fromkeys((*ratings.raters, *ratings.attention)):
        found, missed = ratings.attention.get(rater, (0, 0))
        spans = ratings.spans.get(rater, {})
        scorer = f"{HUMAN_NAME}.{rater}"
        if scorer in ds.scorers:
            own = ds.matrix(scorer)
            rated = np.isfinite(own)
            mean = float(own[rated].mean()) if rated.any() else float("nan")
        else:  # one rater per segment: its scores are mqm itself on the cells it rated
            own, rated, mean = None, None, float("nan")
            if spans:
                index = {s: i for i, s in enumerate(ds.systems)}, {g: j for j, g in enumerate(ds.inputs)}
                rated = np.zeros(gold.shape, dtype=bool)
                for system, segment in spans:
                    rated[index[0][system], index[1][segment]] = True
                mean = float(gold[rated].mean()) if rated.any() else float("nan")
        cells = int(rated.sum()) if rated is not None else 0
        if rated is not None:
            counted += rated
        errors = sum(len(v) for v in spans.values())
        rows.append({"rater": rater, "cells": cells, "mean_mqm": mean,
                     "errors_per_cell": errors / cells if cells else float("nan"),
                     "attention_found": int(found), "attention_missed": int(missed),
                     "attention_rate": found / (found + missed) if found + missed else float("nan")})
    frame = pd.DataFrame(rows, columns=["rater", "cells", "mean_mqm", "errors_per_cell", "attention_found",
                                        "attention_missed", "attention_rate"])
    n_cells = int(np.isfinite(gold).sum())
    per_cell = float(counted[np.isfinite(gold)].mean()) if n_cells else float("nan")
    signature = Signature.of(analysis="mqm-raters", raters=len(frame), **ds.signature_fields())
    return MQMRatersResult(frame, n_cells, per_cell, signature)
