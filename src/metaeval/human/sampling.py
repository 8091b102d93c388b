"""Choosing representative documents to annotate (REALSumm, Bhandari et al. 2020, App. A.1, Algorithm 1).

Annotating every document is too costly, and a uniform sample can miss the easy or the hard ones. The
documents are described by automatic metric scores of the systems' summaries: each metric is first
z-scored over all its (system, document) cells (metrics live on different scales), then a document's
*mean* is the mean of its z-scores over systems and metrics (how well systems do on it) and its *std*
the mean over metrics of the standard deviation across systems (how much systems differ on it). The
documents are split into ``mean_bins`` equal-count bins by mean, each bin into ``std_bins`` equal-count
bins by std, the sample size is shared among the bins in proportion to their sizes (largest remainders,
ties to the earlier bin), and each bin's documents are drawn uniformly without replacement.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import defaults
from .._validation import rng_and_seed
from ..data.scoreset import ScoreSet
from ..errors import ParameterError, check_int
from ..serialization import RECORDS, ResultMixin
from ..signature import Signature


@dataclass(frozen=True)
class SampleResult(ResultMixin):
    """Documents chosen for annotation.

    Attributes
    ----------
    documents : tuple of str
        The chosen input labels, in the ScoreSet's order.
    table : pandas.DataFrame
        One row per candidate document: ``document``, ``mean``, ``std``, ``mean_bin``, ``std_bin``,
        ``selected``.
    n_excluded : int
        Documents without any metric score (never chosen).
    signature : Signature
    """

    documents: tuple[str, ...]
    table: pd.DataFrame = field(metadata=RECORDS)
    n_excluded: int
    signature: Signature

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        """The fields, the counts before the table."""
        out = super().to_dict()
        return {k: out[k] for k in ("documents", "n_excluded", "table", "signature")}


def _sample_iv(ds, metrics, n, mean_bins, std_bins, rng):
    if not isinstance(ds, ScoreSet):
        raise ParameterError(f"`ds` must be a ScoreSet; got {type(ds).__name__}.")
    if isinstance(metrics, str) or not metrics:
        raise ParameterError(f"`metrics` must list at least one scorer; got {metrics!r}.")
    for metric in metrics:
        ds.require(metric, param="metrics")
    n = check_int("n", n, minimum=1)
    mean_bins = check_int("mean_bins", mean_bins, minimum=1)
    std_bins = check_int("std_bins", std_bins, minimum=1)
    generator, seed = rng_and_seed(rng)
    return ds, list(metrics), n, mean_bins, std_bins, generator, seed


def document_profile(ds: ScoreSet, metrics: Sequence[str]) -> pd.DataFrame:
    """Each document's mean and std of the z-scored metrics (see the module notes)."""
    stacked = []
    for metric in metrics:
        matrix = ds.matrix(metric)
        std = np.nanstd(matrix)
        if not std > 0:
            raise ParameterError(f"`metrics` must have non-constant scores; got {metric!r} constant.")
        stacked.append((matrix - np.nanmean(matrix)) / std)
    z = np.stack(stacked)  # metrics x systems x documents
    counts = np.sum(~np.isnan(z), axis=(0, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.nansum(z, axis=(0, 1))
        mean = np.where(counts > 0, total / np.maximum(counts, 1), np.nan)
        n_sys = np.sum(~np.isnan(z), axis=1)
        centred = z - np.where(n_sys > 0, np.nansum(z, axis=1) / np.maximum(n_sys, 1), np.nan)[:, None, :]
        spread = np.sqrt(np.nansum(centred ** 2, axis=1) / np.maximum(n_sys, 1))
        spread = np.where(n_sys > 0, spread, np.nan)
        valid = ~np.isnan(spread)
        std = np.where(valid.any(axis=0), np.nansum(spread, axis=0) / np.maximum(valid.sum(axis=0), 1), np.nan)
    return pd.DataFrame({"document": list(ds.inputs), "mean": mean, "std": std})


def _largest_remainder(sizes: np.ndarray, n: int) -> np.ndarray:
    quota = sizes * n / sizes.sum()
    take = np.minimum(np.floor(quota).astype(int), sizes)
    remainder = quota - take
    for cell in np.argsort(-remainder, kind="stable"):
        if take.sum() >= n:
            break
        if take[cell] < sizes[cell]:
            take[cell] += 1
    while take.sum() < n:  # a full cell could not take its share: give it to the next with room
        cell = int(np.argmax(sizes - take > 0))
        take[cell] += 1
    return take


def sample_documents(ds: ScoreSet, metrics: Sequence[str], n: int, *, mean_bins: int = defaults.SAMPLE_MEAN_BINS,
                     std_bins: int = defaults.SAMPLE_STD_BINS, rng=None) -> SampleResult:
    """Choose ``n`` documents spread over the range of metric scores (REALSumm Algorithm 1).

    Parameters
    ----------
    ds : ScoreSet
        Metric scores of the candidate documents (inputs) for the systems to be judged.
    metrics : sequence of str
        The metrics describing a document (e.g. ROUGE-1, ROUGE-2, ROUGE-L, BERTScore).
    n : int
        Documents to choose (at most the candidates).
    mean_bins, std_bins : int
        Equal-count bins on the documents' mean, then on their std (module notes).
    rng : int, numpy.random.Generator or None
        Seed or generator; an int seed is recorded in the signature.

    Returns
    -------
    SampleResult

    References
    ----------
    Bhandari, Gour, Ashfaq, Liu & Neubig (2020). Re-evaluating Evaluation in Text Summarization. EMNLP,
    Appendix A.1.

    Examples
    --------
    >>> import metaeval as me
    >>> from metaeval.human import sample_documents
    >>> ds = me.load_dataset("summeval")
    >>> sample_documents(ds, ["rouge-1.f1", "rouge-2.f1"], 10, rng=0).documents[:3]  # doctest: +SKIP
    """
    ds, metrics, n, mean_bins, std_bins, generator, seed = _sample_iv(ds, metrics, n, mean_bins, std_bins, rng)
    table = document_profile(ds, metrics)
    candidates = table.index[table["mean"].notna()].to_numpy()
    if n > len(candidates):
        raise ParameterError(f"`n` must be at most the {len(candidates)} documents with metric scores; got {n}.")
    table["mean_bin"] = -1
    table["std_bin"] = -1
    order = candidates[np.lexsort((candidates, table.loc[candidates, "mean"].to_numpy()))]
    cells = []
    for b, chunk in enumerate(np.array_split(order, min(mean_bins, len(order)))):
        table.loc[chunk, "mean_bin"] = b
        inner = chunk[np.lexsort((chunk, table.loc[chunk, "std"].to_numpy()))]
        for s, cell in enumerate(np.array_split(inner, min(std_bins, len(inner)))):
            table.loc[cell, "std_bin"] = s
            cells.append(cell)
    take = _largest_remainder(np.array([len(c) for c in cells]), n)
    chosen = np.concatenate([generator.choice(cell, size=k, replace=False) for cell, k in zip(cells, take) if k > 0])
    table["selected"] = False
    table.loc[chosen, "selected"] = True
    documents = tuple(table.loc[table["selected"], "document"])
    signature = Signature.of(statistic="document-sample", metrics=tuple(metrics), n=n, mean_bins=mean_bins,
                             std_bins=std_bins, seed=seed, **ds.signature_fields())
    return SampleResult(documents, table, int(len(table) - len(candidates)), signature)
