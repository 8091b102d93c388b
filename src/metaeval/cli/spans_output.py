"""The terminal, LaTeX and Markdown tables of `metaeval spans` and the notes under them."""
from __future__ import annotations

from .analysis_output import footer, frame_table

__all__ = ["compact", "compact_table", "paper_frame", "spec_title", "span_table", "span_notes"]


def compact(frame, key: str, measures, digits: int = 3) -> "object":
    """The terminal layout: each measure with its interval in one column ``"0.42 [0.38, 0.47]"``."""
    import pandas as pd

    from ..report.formats import interval, number

    out = pd.DataFrame({key: frame[key]})
    for m in measures:
        out[m] = [f"{number(v, digits)} {interval(lo, hi)}" for v, lo, hi in
                  zip(frame[m], frame[f"{m}_low"], frame[f"{m}_high"])]
    for extra in ("against", "segments", "cluster"):
        if extra in frame:
            out[extra] = [f"rank {v}" for v in frame[extra]] if extra == "cluster" else frame[extra]
    return out


def compact_table(frame, *, title: str | None = None):
    """The terminal table of a :func:`compact` frame: its first column is the key, every cell is kept on one
    line, and a table wider than the output splits into column blocks that repeat the key (never a wrapped
    interval)."""
    from rich.table import Table

    from ..report.render import ColumnBlocks

    columns = list(frame.columns)
    rows = [[str(v) for v in row] for row in frame.itertuples(index=False, name=None)]

    def build(chosen):
        shown = [0] + [1 + c for c in chosen]
        table = Table(title=title if not chosen or chosen[0] == 0 else None, title_justify="left")
        for c in shown:
            table.add_column(str(columns[c]), no_wrap=True)
        for row in rows:
            table.add_row(*[row[c] for c in shown])
        return table

    return ColumnBlocks(build, len(columns) - 1)


def paper_frame(fmt: str, shown):
    """The frame of the LaTeX and Markdown tables: the terminal table's columns (value and interval in one
    cell); CSV and JSON keep every number in its own field."""
    return shown if fmt in ("latex", "markdown") else None


def spec_title(result) -> str:
    from ..spans.measures import MeasureSpec

    return MeasureSpec(result.measure, result.averaging, result.severity, result.matching, result.macro,
                       result.critical).describe()


def span_table(result, notes):
    import pandas as pd

    from ..report.formats import number

    frame = compact(result.to_frame(), "detector", ("precision", "recall", "f1"))
    title = (f"{spec_title(result)}; {result.n_cells} segments ({result.n_systems} systems x "
             f"{result.n_segments} segments rated), {result.n_gold_spans} gold spans"
             + (f" ({result.n_gold_source_spans} in the source)" if result.n_gold_source_spans else ""))
    tables = [compact_table(frame, title=title)]
    if result.fair is not None:
        gold_raters = result.fair.get("rule") == "others-against-gold-raters"
        human = "human (rater outside the gold)" if gold_raters else "human (held-out rater)"
        column = "F1 against the gold raters' union" if gold_raters else "F1 against the others' union"
        fair = pd.DataFrame({"detector": list(result.detectors) + [human],
                             column: [number(v, 3) for v in result.fair["f1"]]
                             + [number(result.fair["ceiling_f1"], 3)]})
        title = (f"Like with like: every row and each rater outside the gold against the gold raters' union, on "
                 f"the segments they share ({result.fair['raters']} raters, mean F1)" if gold_raters else
                 f"Like with like: every row and each held-out rater against the union of the other raters "
                 f"({result.fair['raters']} raters, mean F1)")
        tables.append(frame_table(fair, title=title))
    rows = result.pvalue_rows()
    if rows:
        tests = pd.DataFrame({"first": [r["first"] for r in rows], "second": [r["second"] for r in rows],
                              "F1 difference": [r["delta_f1"] for r in rows], "p-value": [r["pvalue"] for r in rows]})
        tests.attrs["n_resamples"] = result.n_resamples
        family = "all pairs one family" if result.baselines_in_family else "pairs with a baseline a family of their own"
        tables.append(frame_table(tests, title=f"Paired permutation tests of equal F1 (two-sided; {family})"))
    return lambda r: [*tables, *footer(r, notes)]


def span_notes(result, agree=None, correction="none") -> list[str]:
    """The counted notes printed under a spans table (what was left out, what a detector misses)."""
    notes = [f"{name}: {n} segment(s) the gold did not rate left out" for name, n in result.n_left_out.items() if n]
    for reason, n in (result.errors_left_out or {}).items():
        notes.append(f"gold: {n} human error(s) left out ({reason})")
    for name, n in (result.missed_source or {}).items():
        notes.append(f"{name}: predicts no source-side span; the gold's {n} source-side span(s) (omissions) count as "
                     f"missed")
    if result.fair is not None and result.fair.get("rule") == "others-against-gold-raters":
        notes.append(f"human ceiling: each rater outside the gold (--gold-rater) against the gold raters' union on "
                     f"the segments they share, mean F1 {result.fair['ceiling_f1']:.3f} over {result.fair['raters']}"
                     f" raters; compare it with the second table (every row against the same golds and segments)")
    elif result.fair is not None:
        notes.append(f"human ceiling: a held-out rater against the union of the others, mean F1 "
                     f"{result.fair['ceiling_f1']:.3f} over {result.fair['raters']} raters; compare it with the"
                     f" second table (every row against the same golds), not with the F1 of the first")
    elif agree is not None:
        notes.append(f"human ceiling: mean held-out F1 {agree.ceiling_f1:.3f}")
    if result.pvalues is not None and correction != "none":
        notes.append(f"clusters: permutation p-values corrected ({correction}); the pairs with a baseline form "
                     + ("the same family" if getattr(result, "baselines_in_family", False) else "a family of their own")
                     + "; labelled p-values in --format json (pvalue_rows)")
    return notes
