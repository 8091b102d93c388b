"""The QARLA figure: KING and JACK of each metric set, and system-level QUEEN against the human scores.

Left: KING (the share of left-out models whose QUEEN beats every peer's) and JACK of every metric set, as
bars (Amigo et al. 2005, Figure 2 and Sec. 3.4). Right: each system's QUEEN under the metric set with the
highest KING against its human score, with Pearson r (their Figure 5's question: do higher-KING sets give
QUEEN rankings closer to the humans?). Without human scores, the right panel shows QUEEN per system.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ParameterError
from .svg import new_figure, save_figure

__all__ = ["FIGURE_SUFFIXES", "check_figure_path", "save_qarla_figure"]

FIGURE_SUFFIXES = (".png", ".svg")


def check_figure_path(path: str | Path, *, param: str = "plot") -> Path:
    """``path`` as a Path, if it ends in ``.png`` or ``.svg`` (``param``: the option named in the error)."""
    path = Path(path)
    if path.suffix.lower() not in FIGURE_SUFFIXES:
        raise ParameterError(f"`{param}` must be a file name ending in {' or '.join(FIGURE_SUFFIXES)}; got {str(path)!r}.")
    return path


def save_qarla_figure(result, path: str | Path) -> Path:
    """Draw :class:`metaeval.QarlaResult` ``result`` to ``path`` (``.png`` or ``.svg``; written atomically)."""
    path = check_figure_path(path)
    best = int(np.argmax(result.king))
    sets = list(result.metric_sets)
    with new_figure(10.0, 0.28 * len(sets) + 2.6, ncols=2) as (fig, (left, right)):
        y = np.arange(len(sets))
        left.barh(y - 0.2, result.king, height=0.4, label="KING", color="#1f77b4")
        left.barh(y + 0.2, result.jack, height=0.4, label="JACK", color="#bbbbbb")
        left.set_yticks(y, [s if len(s) <= 40 else s[:37] + "..." for s in sets], fontsize=7)
        left.invert_yaxis()
        left.set_xlim(0, 1)
        left.set_xlabel("probability")
        left.legend(fontsize=7, loc="lower right")
        left.set_title(f"{result.n_inputs} inputs, {result.n_models} models, {len(result.systems)} systems",
                       fontsize=8)
        queen = result.queen[best]
        if result.human is not None and np.isfinite(result.human_scores).any():
            right.scatter(result.human_scores, queen, s=14, color="#1f77b4")
            for name, hx, qy in zip(result.systems, result.human_scores, queen):
                right.annotate(name, (hx, qy), fontsize=6, xytext=(2, 2), textcoords="offset points")
            right.set_xlabel(f"human ({result.human}), system mean")
            right.set_title(f"QUEEN of {sets[best]} (best KING)\nPearson r = {result.pearson[best]:.3f}", fontsize=8)
        else:
            right.bar(np.arange(len(queen)), queen, color="#1f77b4")
            right.set_xticks(np.arange(len(queen)), result.systems, rotation=90, fontsize=6)
            right.set_title(f"QUEEN of {sets[best]} (best KING)", fontsize=8)
        right.set_ylabel("QUEEN (mean over inputs)")
        fig.tight_layout()
        save_figure(fig, path)
    return path
