"""`metaeval familywise`: the multiplicity problem of k comparisons (Riezler & Maxwell 2005, section 4.4)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click
import pandas as pd
from rich.text import Text

from ..errors import ParameterError
from ..report.render import SignatureLines, render_text
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.significance.familywise import familywise_error, n_pairwise_comparisons, per_comparison_level
from .common import declare, emit, option, output_options, output_width


@dataclass(frozen=True)
class FamilywiseTable(ResultMixin):
    """What `metaeval familywise` prints: one row per per-comparison level and its family-wise error."""

    comparisons: int
    systems: int | None
    alpha: float
    rows: tuple[dict[str, Any], ...]
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        return [dict(row) for row in self.rows]


@click.command()
@option("comparisons", type=int, help="The number k of comparisons in the family.")
@declare("systems", dict(type=int, help="Compare every pair of this many systems: k = n (n - 1) / 2."))
@declare("per_comparison", dict(type=float, multiple=True, help="A per-comparison level p_c whose family-wise error"
                                                                " 1 - (1 - p_c)^k is shown (repeatable)."))
@option("alpha", help="Target family-wise error: the Sidak and Bonferroni per-comparison levels that keep it.")
@output_options
def familywise(comparisons, systems, per_comparison, alpha, format, output):
    """Family-wise error of k comparisons; the Sidak level for a target."""
    if (comparisons is None) == (systems is None):
        raise ParameterError("exactly one of `--comparisons` and `--systems` must be given; got "
                             + ("both." if comparisons is not None else "neither."))
    k = n_pairwise_comparisons(systems) if systems is not None else comparisons
    rows = [{"level": "given", "per_comparison": float(p), "comparisons": k,
             "familywise_error": familywise_error(p, k)} for p in per_comparison]
    for method in ("sidak", "bonferroni"):
        level = per_comparison_level(alpha, k, method=method)
        rows.append({"level": method, "per_comparison": level, "comparisons": k,
                     "familywise_error": familywise_error(level, k)})
    signature = Signature.of(statistic="familywise", comparisons=k, systems=systems, alpha=alpha,
                             per_comparison=tuple(float(p) for p in per_comparison))
    result = FamilywiseTable(k, systems, alpha, tuple(rows), signature)

    def terminal(result):
        family = f"{k} comparisons" + (f" (every pair of {systems} systems)" if systems is not None else "")
        lines = [f"family: {family}"]
        lines += [f"per-comparison level {r['per_comparison']:g}: family-wise error 1 - (1 - {r['per_comparison']:g})"
                  f"^{k} = {r['familywise_error']:.4f}" for r in rows if r["level"] == "given"]
        sidak, bonferroni = rows[-2]["per_comparison"], rows[-1]["per_comparison"]
        lines.append(f"family-wise error {alpha:g}: per-comparison level {sidak:.6g} (Sidak, 1 - (1 - {alpha:g})"
                     f"^(1/{k})); {bonferroni:.6g} (Bonferroni, {alpha:g}/{k})")
        return [Text("\n".join(lines + ["signature:"])), SignatureLines(result.signature, label="")]

    emit(render_text(result, format, terminal=terminal, frame=pd.DataFrame(rows), width=output_width(output)), output)
