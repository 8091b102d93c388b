"""The meta-evaluation report of one dataset: correlation table and significance matrix."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import defaults
from ..comparison import compare_metrics
from ..data.scoreset import ScoreSet
from ..results import MetricComparisonResult
from ..table import CorrelationTable, correlation_table
from .files import write_text_atomic
from .formats import to_csv, to_json


@dataclass(frozen=True)
class Report:
    """Everything the report shows: the dataset summary, the correlation table, the significance matrix."""

    dataset: dict[str, Any]
    table: CorrelationTable
    comparison: MetricComparisonResult

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "correlations": self.table.to_dict(),
            "comparison": self.comparison.to_dict(),
        }


def build_report(
    ds: ScoreSet,
    human: str,
    metrics: Sequence[str] | None = None,
    *,
    levels: Sequence[str] = defaults.REPORT_LEVELS,
    coefficients: Sequence[str] = defaults.REPORT_COEFFICIENTS,
    coefficient: str = defaults.COEFFICIENT,
    n_resamples: int = defaults.N_RESAMPLES,
    seed: int = defaults.SEED,
    progress: Any = None,
) -> Report:
    """Correlations with BOOT-BOTH intervals at ``levels`` x ``coefficients``, and the system-level
    PERM-BOTH significance matrix of ``coefficient`` (Holm over the matrix) with cluster ranks.

    ``progress`` is an optional ``rich.progress.Progress``.
    """
    if metrics is None:
        metrics = [m for m in ds.metrics if m != human]
    advance = None
    if progress is not None:
        task = progress.add_task("correlations", total=len(metrics) * len(levels) * len(coefficients))
        advance = lambda: progress.advance(task)  # noqa: E731
    table = correlation_table(ds, human, metrics, levels=levels, coefficients=coefficients,
                              ci="boot-both", n_resamples=n_resamples, rng=seed, progress=advance)
    if progress is not None:
        progress.add_task("significance matrix", total=None)
    comparison = compare_metrics(ds, metrics, human, level="system", coefficient=coefficient,
                                 test="permutation", method="both", n_resamples=n_resamples,
                                 correction="holm", family="matrix", rng=seed)
    return Report(dataset=ds.describe(), table=table, comparison=comparison)


def write_report(report: Report, directory: Path) -> list[Path]:
    """Write results.json, correlations.csv and comparison.csv into ``directory`` (each atomically)."""
    directory = Path(directory)
    return [
        write_text_atomic(directory / "results.json", to_json(report)),
        write_text_atomic(directory / "correlations.csv", to_csv(report.table.to_frame())),
        write_text_atomic(directory / "comparison.csv", to_csv(report.comparison.to_frame())),
    ]
