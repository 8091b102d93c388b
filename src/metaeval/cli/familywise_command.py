"""`metaeval familywise`: the multiplicity problem of k comparisons (Riezler & Maxwell 2005, section 4.4)."""
from __future__ import annotations

import json

import click

from .. import defaults
from ..errors import ParameterError
from ..stats.significance.familywise import familywise_error, pairwise_comparisons, per_comparison_level
from .common import emit

FORMATS = ("table", "json")


@click.command()
@click.option("--comparisons", type=int, help="The number k of comparisons in the family.")
@click.option("--systems", type=int, help="Compare every pair of this many systems: k = n (n - 1) / 2.")
@click.option("--per-comparison", type=float, multiple=True,
              help="A per-comparison level p_c whose family-wise error 1 - (1 - p_c)^k is shown (repeatable).")
@click.option("--alpha", type=float, default=defaults.ALPHA, show_default=True,
              help="Target family-wise error: the Sidak and Bonferroni per-comparison levels that keep it.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="Output format.")
@click.option("--output", type=click.Path(dir_okay=False), help="Write the result here instead of the terminal.")
def familywise(comparisons, systems, per_comparison, alpha, fmt, output):
    """Family-wise error of k comparisons; the Sidak level for a target."""
    if (comparisons is None) == (systems is None):
        raise ParameterError("exactly one of `--comparisons` and `--systems` must be given; got "
                             + ("both." if comparisons is not None else "neither."))
    k = pairwise_comparisons(systems) if systems is not None else comparisons
    errors = [(p, familywise_error(p, k)) for p in per_comparison]
    sidak = per_comparison_level(alpha, k)
    bonferroni = per_comparison_level(alpha, k, method="bonferroni")
    if fmt == "json":
        record = {"comparisons": k, "systems": systems, "alpha": alpha, "sidak_level": sidak,
                  "bonferroni_level": bonferroni,
                  "familywise_error": [{"per_comparison": p, "familywise_error": e} for p, e in errors]}
        emit(json.dumps(record, indent=2) + "\n", output)
        return
    family = f"{k} comparisons" + (f" (every pair of {systems} systems)" if systems is not None else "")
    lines = [f"family: {family}"]
    lines += [f"per-comparison level {p:g}: family-wise error 1 - (1 - {p:g})^{k} = {e:.4f}" for p, e in errors]
    lines.append(f"family-wise error {alpha:g}: per-comparison level {sidak:.6g} (Sidak, 1 - (1 - {alpha:g})^(1/{k}));"
                 f" {bonferroni:.6g} (Bonferroni, {alpha:g}/{k})")
    emit("\n".join(lines) + "\n", output)
