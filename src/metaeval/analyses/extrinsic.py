"""Extrinsic (task-based) agreement of summaries: Relevance-Prediction and LDC-Agreement
(Dorr, Monz, President, Schwartz & Zajic 2005).

Subjects judge the relevance of documents to an event from a *surrogate* (a summary: a headline, a human
summary, a system output) and from the full text. A judgment table has one row per (subject, document,
condition): ``subject``, ``document``, ``condition`` (the surrogate's name, or the full-text condition,
``'full'`` by default), ``judgment`` (any label, e.g. relevant / not), optional ``gold`` (the reference
label of the document, e.g. LDC's), optional ``group`` (e.g. the event) and optional metric columns (the
metric score of that surrogate of that document).

- **Relevance-Prediction** of a condition: ``RP = sum j(s, d) / |DS|`` over the (subject, document) pairs
  judged under the condition and on the full text, ``j = 1`` when the subject's surrogate judgment equals
  the same subject's full-text judgment (sec. 3.1);
- **LDC-Agreement**: the share of the condition's judgments equal to the gold label (sec. 3.4);
- **Table 6**: the pairs by (surrogate judgment, full-text judgment), with their count, share and the mean
  and population standard deviation of a metric.

Decisions: a rate over several groups pools the judgments (sum over all pairs / all pairs), which equals
the mean of the groups' rates when groups are of equal size (the paper's Table 1); a surrogate judgment
without the subject's full-text judgment of the document is left out of Relevance-Prediction and counted
(``n_unpaired``); a document with two different gold labels is an error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import defaults
from ..errors import InputFileError, ParameterError
from ..serialization import EXCLUDED, ResultMixin
from ..signature import Signature
from . import _common as common
from .nugget_tables import read_columns

__all__ = ["RelevanceAgreementResult", "judgment_points", "relevance_agreement"]

MEASURES = ("relevance-prediction", "ldc-agreement")
_COLUMN = {"relevance-prediction": "relevance_prediction", "ldc-agreement": "ldc_agreement"}


@dataclass(frozen=True)
class RelevanceAgreementResult(ResultMixin):
    """Relevance-Prediction and LDC-Agreement of every surrogate condition.

    Attributes
    ----------
    rates : pandas.DataFrame
        One row per condition (and per group when ``by_group``; group 'all' otherwise): ``condition``,
        ``group``, ``n_judgments``, ``n_paired``, ``relevance_prediction`` (NaN for the full-text
        condition), ``n_gold``, ``ldc_agreement`` (NaN without gold labels).
    categories : pandas.DataFrame
        Table 6: ``condition``, ``surrogate``, ``full_text`` (judgments), ``n``, ``share`` and, per metric
        column, ``<metric>_mean`` and ``<metric>_std`` (population standard deviation).
    points : pandas.DataFrame
        One row per (condition, document): ``n_paired``, ``relevance_prediction``, ``n_gold``,
        ``ldc_agreement`` and the mean of each metric column: the data points of
        :func:`metaeval.extrinsic_correlation`.
    judgments : pandas.DataFrame
        The surrogate judgments, one row per (subject, document, condition), with ``agree`` (1/0, NaN
        when unpaired: Relevance-Prediction's j(s, d)), ``correct`` (1/0 against gold, NaN without) and the
        metric columns.
    n_unpaired : int
        Surrogate judgments without the same subject's full-text judgment of the document.
    """

    rates: pd.DataFrame = field(metadata=EXCLUDED)
    categories: pd.DataFrame = field(metadata=EXCLUDED)
    points: pd.DataFrame = field(metadata=EXCLUDED)
    judgments: pd.DataFrame = field(metadata=EXCLUDED, repr=False)
    full_text: str
    metrics: tuple[str, ...]
    n_unpaired: int
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        return common.records(self.rates)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["rates"] = common.records(self.rates)
        out["categories"] = common.records(self.categories)
        return out


def _read_judgments(judgments: Any, metrics: tuple[str, ...]):
    table = read_columns(judgments, required=("subject", "document", "condition", "judgment", *metrics),
                         param="judgments")
    frame = pd.DataFrame({"subject": table.labels("subject"), "document": table.labels("document"),
                          "condition": table.labels("condition"), "judgment": table.labels("judgment"),
                          "row": table.rows})
    frame["gold"] = table.labels("gold") if table.has("gold") else None
    frame["group"] = table.labels("group") if table.has("group") else "all"
    for metric in metrics:
        frame[metric] = table.numbers(metric)
    twice = frame.duplicated(["subject", "document", "condition"])
    if twice.any():
        k = int(np.flatnonzero(twice.to_numpy())[0])
        raise InputFileError(table.path, f"each (subject, document, condition) must have one row; got "
                             f"({frame['subject'].iat[k]!r}, {frame['document'].iat[k]!r}, "
                             f"{frame['condition'].iat[k]!r}) twice.", row=int(frame["row"].iat[k]))
    if table.has("gold"):
        golds = frame.groupby("document")["gold"].nunique()
        if (golds > 1).any():
            doc = golds.index[golds.to_numpy() > 1][0]
            k = int(np.flatnonzero((frame["document"] == doc).to_numpy())[-1])
            raise InputFileError(table.path, f"a document must have one gold label; got several for {doc!r}.",
                                 row=int(frame["row"].iat[k]), column="gold")
    return table, frame


def _rates(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    grouped = frame.groupby(keys, sort=True)
    out = pd.DataFrame({
        "n_judgments": grouped.size(),
        "n_paired": grouped["agree"].count(),
        "relevance_prediction": grouped["agree"].mean(),
        "n_gold": grouped["correct"].count(),
        "ldc_agreement": grouped["correct"].mean(),
    }).reset_index()
    return out


def source_field(judgments: Any) -> dict:
    """``{"source": FILE NAME}`` when the judgments were given as a path (issue 41: a signature names its data)."""
    import os
    from pathlib import Path

    return {"source": Path(judgments).name} if isinstance(judgments, (str, os.PathLike)) else {}


def relevance_agreement(judgments: Any, *, full_text: str = defaults.FULL_TEXT_CONDITION,
                        metrics: Any = (), by_group: bool = False) -> RelevanceAgreementResult:
    """Relevance-Prediction and LDC-Agreement of each surrogate condition (Dorr et al. 2005).

    Parameters
    ----------
    judgments : path or pandas.DataFrame
        The judgment table (module docstring): ``subject``, ``document``, ``condition``, ``judgment``,
        optional ``gold``, ``group`` and the ``metrics`` columns.
    full_text : str, keyword-only
        The condition of the full-text judgments (default 'full').
    metrics : sequence of str, keyword-only
        Metric columns of the table, averaged per Table 6 category and per (condition, document).
    by_group : bool, keyword-only
        Rates per group (e.g. event, Table 1) as well as over all groups.

    Returns
    -------
    RelevanceAgreementResult

    Raises
    ------
    InputFileError
        A missing column, an empty label, a (subject, document, condition) twice, a document with two gold
        labels, a metric cell that is not a number.
    ParameterError
        No judgment under ``full_text``, or no other condition.

    References
    ----------
    B. Dorr, C. Monz, S. President, R. Schwartz and D. Zajic (2005). A Methodology for Extrinsic Evaluation
    of Text Summarization: Does ROUGE Correlate? ACL 2005 Workshop on Intrinsic and Extrinsic Evaluation
    Measures for MT and/or Summarization, sec. 3.1, Tables 1 and 6.
    """
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    by_group = common.check_bool("by_group", by_group)
    table, frame = _read_judgments(judgments, metrics)
    conditions = sorted(set(frame["condition"]))
    if full_text not in conditions:
        raise ParameterError(f"`full_text` must name a condition of the table ({', '.join(map(repr, conditions))}); "
                             f"got {full_text!r}.")
    if len(conditions) < 2:
        raise ParameterError(f"`judgments` must hold a surrogate condition besides {full_text!r}; got none.")
    full = frame[frame["condition"] == full_text].set_index(["subject", "document"])["judgment"]
    pairs = pd.MultiIndex.from_frame(frame[["subject", "document"]])
    reference = full.reindex(pairs).to_numpy()
    surrogate = (frame["condition"] != full_text).to_numpy()
    has_full = pd.notna(reference) & surrogate
    frame["full_judgment"] = np.where(has_full, reference, None)
    frame["agree"] = np.where(has_full, (frame["judgment"].to_numpy() == reference).astype(float), np.nan)
    frame["correct"] = (np.where(frame["gold"].notna(), (frame["judgment"] == frame["gold"]).astype(float), np.nan)
                        if table.has("gold") else np.nan)
    n_unpaired = int((surrogate & ~has_full).sum())
    rates = _rates(frame.assign(group="all"), ["condition", "group"])
    if by_group:
        rates = pd.concat([_rates(frame, ["condition", "group"]), rates], ignore_index=True)
    paired = frame[has_full]
    cats = paired.groupby(["condition", "judgment", "full_judgment"], sort=True)
    categories = pd.DataFrame({"n": cats.size()})
    for metric in metrics:
        categories[f"{metric}_mean"] = cats[metric].mean()
        categories[f"{metric}_std"] = cats[metric].std(ddof=0)
    categories = categories.reset_index().rename(columns={"judgment": "surrogate", "full_judgment": "full_text"})
    totals = categories.groupby("condition")["n"].transform("sum")
    categories.insert(4, "share", categories["n"] / totals)
    points = judgment_points(frame[surrogate], metrics)
    signature = Signature.of(analysis="extrinsic-agreement", **source_field(judgments), metrics=metrics or None,
                             full_text=full_text, conditions=len(conditions) - 1,
                             subjects=frame["subject"].nunique(), documents=frame["document"].nunique(),
                             gold=table.has("gold"), by_group=by_group)
    kept = ["subject", "document", "condition", "group", "judgment", "full_judgment", "agree", "correct", *metrics]
    return RelevanceAgreementResult(rates=rates, categories=categories, points=points,
                                    judgments=frame.loc[surrogate, kept].reset_index(drop=True), full_text=full_text,
                                    metrics=metrics, n_unpaired=n_unpaired, signature=signature)


def judgment_points(frame: pd.DataFrame, metrics: tuple[str, ...]) -> pd.DataFrame:
    """Per (condition, document): agreement counts and rates over subjects and the metric means."""
    grouped = frame.groupby(["condition", "document"], sort=True)
    points = pd.DataFrame({
        "n_paired": grouped["agree"].count(), "relevance_prediction": grouped["agree"].mean(),
        "n_gold": grouped["correct"].count(), "ldc_agreement": grouped["correct"].mean(),
    })
    for metric in metrics:
        points[metric] = grouped[metric].mean()
    return points.reset_index()
