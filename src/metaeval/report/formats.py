"""Machine-readable and paper-ready renderings of results: JSON, CSV, LaTeX and Markdown text.

LaTeX tables use ``booktabs`` (``\\toprule``, ``\\midrule``, ``\\bottomrule``); every user-supplied
string (metric, human, dataset names) is escaped for LaTeX or Markdown, and the signature is kept under
the table (a LaTeX comment, a Markdown line) so a pasted table still says how it was computed.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from ..vocabulary import OUTPUT_FORMATS as FORMATS

PAPER_FORMATS = tuple(f for f in FORMATS if f in ("latex", "markdown"))

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
    "\n": r"\textbackslash{}n", "\r": r"\textbackslash{}r",
}
_MARKDOWN_SPECIAL = {
    "\\": "\\\\", "|": "\\|", "*": "\\*", "_": "\\_", "`": "\\`", "[": "\\[", "]": "\\]",
    "\n": "\\n", "\r": "\\r",
}
_MARKDOWN_MARKUP = re.compile(r"<(?=[A-Za-z/!?])|(?<=[A-Za-z0-9\"'/-])>|&(?=#|[A-Za-z0-9]+;)")
"""``<``, ``>`` and ``&`` where they can make markup: ``<`` opening a tag or an autolink, ``>`` closing one,
``&`` starting an entity; elsewhere (``p < 0.05``, ``p > 0.05``, ``A & B``) they stay as they are."""
_MARKUP_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def to_json(payload: Any) -> str:
    """JSON text of a result (``to_dict()``) or of a list / dict of them; NaN is written as null."""
    from ..serialization import plain

    return json.dumps(plain(_dictify(payload)), indent=2, allow_nan=False) + "\n"


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def spreadsheet_text(value: Any) -> Any:
    """``value`` with a ``'`` in front when it is text a spreadsheet would run as a formula.

    A text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (a metric or system
    named ``=HYPERLINK(...)``) is written as ``'=HYPERLINK(...)``: Excel, LibreOffice and Google Sheets
    show it as text. Numbers (and text that is a number, such as ``-0.5`` or ``-inf``) are never changed.
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _is_number(value):
        return "'" + value
    return value


#: Column names of p-values in result frames (``pvalue``, ``adjusted_pvalue``, ``system_pvalue``, ``p_vs_X``).
PVALUE_COLUMN = re.compile(r"(^|_)p(value)?(_vs_|$)|pvalue")


def pvalue_text(value: Any, n_resamples: int | None = None, digits: int = 3) -> str:
    """A p-value as printed in every text table: never ``0``.

    'n/a' for None or NaN; ``< 0.001`` below 0.001; an exact 0 from a resampling test with ``n_resamples``
    draws (mt-metrics-eval's count / k convention: no draw as extreme) is ``< 1/k`` at the test's resolution
    (``< 0.02`` with 50 draws; ``< 0.001`` without ``n_resamples``); otherwise :func:`number`.
    """
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    value = float(value)
    if value == 0 and n_resamples:
        return f"< {1 / n_resamples:.{digits}g}"
    if value < 0.001:
        return "< 0.001"
    return number(value, digits)


def _pvalue_columns(frame, n_resamples: int | None, everywhere: bool):
    """``frame`` with its p-value columns as text (:func:`pvalue_text`): every value, or (``everywhere`` False,
    for CSV) only the exact zeros, which no test has."""
    frame = frame.copy()
    for column in frame.columns:
        if isinstance(column, str) and PVALUE_COLUMN.search(column) and frame[column].dtype.kind == "f":
            values = frame[column].astype(object)
            frame[column] = [pvalue_text(v, n_resamples) if everywhere or v == 0 else v for v in values]
    return frame


def to_csv(frame, *, n_resamples: int | None = None) -> str:
    """CSV text of a pandas DataFrame (no index); text cells and column names that a spreadsheet would run
    as formulas get a leading ``'`` (:func:`spreadsheet_text`), numbers are written as they are, except a
    p-value of exactly 0, written ``< 1/k`` (:func:`pvalue_text`; ``n_resamples`` is k)."""
    frame = _pvalue_columns(frame, n_resamples or frame.attrs.get("n_resamples"), everywhere=False)
    for column in frame.columns:
        if frame[column].dtype.kind not in "biufcmM":  # text (object or string dtype)
            frame[column] = frame[column].map(spreadsheet_text)
    frame.columns = [spreadsheet_text(c) for c in frame.columns]
    return frame.to_csv(index=False, lineterminator="\n")


def _dictify(payload: Any) -> Any:
    if hasattr(payload, "to_dict") and not isinstance(payload, dict):
        return payload.to_dict()
    if isinstance(payload, dict):
        return {k: _dictify(v) for k, v in payload.items()}
    if isinstance(payload, (list, tuple)):
        return [_dictify(v) for v in payload]
    return payload


def latex_escape(value: Any) -> str:
    """``value`` as LaTeX text: the ten special characters (and ``<``, ``>``, ``|``) escaped; a line break
    in a name is shown as ``\\n`` (a blank line would end the table's row)."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(value))


def markdown_escape(value: Any) -> str:
    """``value`` as Markdown table text: no column break, emphasis, code span, link or raw HTML; a line
    break in a name is shown as ``\\n`` (a real one would end the table row). ``<``, ``>`` and ``&`` become
    entities only where they could make markup (a tag, an autolink, an entity), so ``p < 0.05`` reads as
    written (it printed ``p &lt; 0.05``)."""
    text = _MARKDOWN_MARKUP.sub(lambda m: _MARKUP_ENTITIES[m.group()], str(value))
    return "".join(_MARKDOWN_SPECIAL.get(ch, ch) for ch in text)


def number(value: Any, digits: int = 3) -> str:
    """The one number format of every table (terminal, HTML, LaTeX, Markdown).

    ``digits`` decimals; 'n/a' for None or NaN; integers as they are; yes / no for booleans; values too
    small to show in ``digits`` decimals (but not 0) or of a million and more with ``digits`` significant
    digits.
    """
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalars
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    if value != 0 and (abs(value) < 0.5 * 10 ** -digits or abs(value) >= 10 ** 6):
        return f"{value:.{digits}g}"
    return f"{value:.{digits}f}"


def interval(low: Any, high: Any, digits: int = 2) -> str:
    """``[low, high]`` with :func:`number`."""
    return f"[{number(low, digits)}, {number(high, digits)}]"


def _interval(result, digits: int = 2) -> str:
    return "" if result.ci is None else interval(result.ci[0], result.ci[1], digits)


# -- generic writers ------------------------------------------------------------------------------

def latex_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, align: str | None = None,
                top: str | None = None, note: str | None = None) -> str:
    """A booktabs table; cells are already LaTeX (escape them first). ``top`` is an extra header row."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = [f"\\begin{{tabular}}{{{align}}}", "\\toprule"]
    if top:
        lines.append(top)
    lines.append(" & ".join(header) + r" \\")
    lines.append("\\midrule")
    lines.extend(" & ".join(row) + r" \\" for row in rows)
    lines.extend(["\\bottomrule", "\\end{tabular}"])
    if note:
        lines.append("% " + note.replace("\n", " "))
    return "\n".join(lines) + "\n"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, align: str | None = None,
                   note: str | None = None) -> str:
    """A GitHub-flavoured Markdown table; cells are already Markdown (escape them first).

    ``align`` has one letter per column, 'l' or 'r' (default: the first column left, the others right).
    """
    align = align or "l" + "r" * (len(header) - 1)
    rules = [":---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rules) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    if note:
        lines.extend(["", note])
    return "\n".join(lines) + "\n"


# -- renderers for metaeval results ------------------------------------------------------------------

def _correlation_table(table, fmt: str) -> str:
    esc = latex_escape if fmt == "latex" else markdown_escape
    note = f"signature: {table.signature}"
    rows = []
    for metric in table.metrics:
        row = [esc(metric)]
        for level in table.levels:
            for coefficient in table.coefficients:
                r = table.get(metric, level, coefficient)
                cell = number(r.statistic)
                ci = _interval(r)
                if ci:
                    cell += f" {{\\scriptsize {ci}}}" if fmt == "latex" else f" {ci}"
                row.append(cell)
        rows.append(row)
    coefficients = [esc(c) for c in table.coefficients]
    if fmt == "latex":
        k = len(table.coefficients)
        top = " & ".join([""] + [f"\\multicolumn{{{k}}}{{c}}{{{esc(level)}}}" for level in table.levels]) + r" \\"
        rules = "".join(f"\\cmidrule(lr){{{2 + i * k}-{1 + (i + 1) * k}}}" for i in range(len(table.levels)))
        return latex_table(["Metric"] + coefficients * len(table.levels), rows, top=top + "\n" + rules,
                           note=f"correlation with {esc(table.human)}; {note}")
    header = ["metric"] + [f"{esc(level)} {c}" for level in table.levels for c in coefficients]
    return markdown_table(header, rows, note=f"Correlation with {esc(table.human)}. {esc(note)}")


def _comparison(result, fmt: str) -> str:
    esc = latex_escape if fmt == "latex" else markdown_escape
    stats = [c.statistic for c in result.correlations]
    order = sorted(range(len(result.metrics)),
                   key=lambda i: (result.ranks[i], -(stats[i] if not math.isnan(stats[i]) else -math.inf)))
    position = {i: k + 1 for k, i in enumerate(order)}
    rows = []
    for i in order:
        beats = [str(position[j]) for j in order if result.significant[i, j]]
        rows.append([str(result.ranks[i]), result.rank_ranges[i], str(position[i]), esc(result.metrics[i]),
                     number(stats[i]),
                     ", ".join(beats) or "-"])
    note = (f"{result.level}-level {result.coefficient}; significantly better (after {result.correction}, "
            f"alpha {result.alpha:g}) than the metrics numbered in the last column; signature: {result.signature}")
    header = ["Rank", "Positions", "\\#" if fmt == "latex" else "#", "Metric", esc(result.coefficient),
              "Better than"]
    if fmt == "latex":
        return latex_table(header, rows, align="rrrlrl", note=esc(note))
    return markdown_table(header, rows, align="rrrlrl", note=esc(note))


def _mt_table(result, fmt: str) -> str:
    """The rankings of an :class:`~metaeval.MtEvaluationResult`, one group of rows per scope (language pair,
    then pooled; a ``\\midrule`` between groups in LaTeX): the average with its cluster rank in parentheses
    and every task statistic, bold where the rank (of the average, or on that task) is 1; ``--`` where the
    task is not one of the scope's."""
    latex = fmt == "latex"
    esc = latex_escape if latex else markdown_escape

    def bold(text, first):
        return text if not first else (f"\\textbf{{{text}}}" if latex else f"**{text}**")

    def best(values, ranks):
        """Bold: rank 1, and every value that prints like a rank-1 value (tied at the printed precision)."""
        shown = {number(v) for v, r in zip(values, ranks) if r == 1}
        return [r == 1 or number(v) in shown for v, r in zip(values, ranks)]

    names = list(dict.fromkeys(task.split(":", 1)[1] for task in result.tasks))
    header = ["LP", "Metric", "Average", *(esc(name) for name in names)]
    groups = []
    for scope in result.scopes:
        rows = []
        records = result.table(scope).to_dict("records")
        top_average = dict(zip([r["metric"] for r in records],
                               best([r["average"] for r in records], [r["rank"] for r in records])))
        top_task = {task: best(result.statistics[t], result.task_ranks[task]) for t, task in enumerate(result.tasks)}
        for k, row in enumerate(records):
            i = result.metrics.index(row["metric"])
            cells = [esc(scope) if k == 0 else "", esc(result.label(row["metric"])),
                     bold(number(row["average"]), top_average[row["metric"]]) + f" ({row['rank']})"]
            for name in names:
                task = f"{scope}:{name}"
                if task not in result.tasks:
                    cells.append("--")
                else:
                    t = result.tasks.index(task)
                    cells.append(bold(number(result.statistics[t, i]), top_task[task][i]))
            rows.append(cells)
        groups.append(rows)
    note = (f"average of the tasks ({result.protocol}) with its cluster rank in parentheses; bold: rank 1 "
            f"({result.significance}, alpha {result.alpha:g}) on the average or on that task, and any value equal to"
            " a rank-1 value at the printed precision; --: not a task of "
            f"the scope" + ("; (human): a human baseline scored as a metric" if result.human_baselines else "")
            + ("" if result.signature is None else f"; signature: {result.signature}"))
    align = "ll" + "r" * (len(header) - 2)
    if latex:
        rows = [row for k, group in enumerate(groups) for row in ([["\\midrule"]] if k else []) + group]
        text = latex_table(header, rows, align=align, note=esc(note))
        text = text.replace("\\midrule \\\\\n", "\\midrule\n")  # a rule between groups is not a row
    else:
        text = markdown_table(header, [row for group in groups for row in group], align=align, note=esc(note))
    return text + _mt_baselines(result, fmt) if result.human_baselines else text


def _mt_baselines(result, fmt: str) -> str:
    """The verdicts of an MT result with human baselines: per scope, task (``average``: the scope's ranking)
    and baseline, the metrics significantly above it, level with it and below it."""
    latex = fmt == "latex"
    esc = latex_escape if latex else markdown_escape
    rows = [[esc(r["scope"]), esc(r["task"]), esc(f"{r['baseline']} (human)"), number(r["baseline_statistic"]),
             esc(r["above"]), esc(r["level"]), esc(r["below"])] for r in result.baseline_verdicts(summary=True)]
    header = ["LP", "Task", "Baseline", "Value", "Above", "Level", "Below"]
    note = (f"metrics significantly above (p < {result.alpha:g}), level with and below each human baseline "
            f"({result.significance}); average: the scope's weighted average")
    table = latex_table if latex else markdown_table
    return "\n" + table(header, rows, align="lllrlll", note=esc(note))


def _frame(frame, fmt: str, note: str | None = None, n_resamples: int | None = None) -> str:
    esc = latex_escape if fmt == "latex" else markdown_escape
    frame = _pvalue_columns(frame, n_resamples or frame.attrs.get("n_resamples"), everywhere=True)
    header = [esc(c) for c in frame.columns]
    rows = [[esc(number(v)) if isinstance(v, float) else esc(v) for v in record]
            for record in frame.itertuples(index=False, name=None)]
    if fmt == "latex":
        return latex_table(header, rows, align="l" * len(header), note=note and esc(note))
    return markdown_table(header, rows, align="l" * len(header), note=note and esc(note))


def to_paper(obj: Any, fmt: str, frame=None) -> str:
    """LaTeX (``fmt='latex'``) or Markdown (``fmt='markdown'``) table of a result.

    A :class:`~metaeval.CorrelationTable` becomes metrics x (level, coefficient) with intervals; a
    :class:`~metaeval.MetricComparisonResult` a ranking with cluster ranks and the metrics each one
    significantly beats; a :class:`~metaeval.MtEvaluationResult` its rankings grouped by language pair; any
    other result (or a DataFrame ``frame``) one row per record of its
    ``to_frame()``.
    """
    from ..mt.result import MtEvaluationResult
    from ..correlation.results import MetricComparisonResult
    from ..correlation.table import CorrelationTable
    from ..errors import check_choice

    fmt = check_choice("format", fmt, PAPER_FORMATS)
    if isinstance(obj, CorrelationTable):
        return _correlation_table(obj, fmt)
    if isinstance(obj, MetricComparisonResult):
        return _comparison(obj, fmt)
    if isinstance(obj, MtEvaluationResult):
        return _mt_table(obj, fmt)
    if frame is None:
        frame = obj.to_frame()
    signature = getattr(obj, "signature", None)
    return _frame(frame, fmt, None if signature is None else f"signature: {signature}", resolution(obj))


def resolution(result: Any) -> int | None:
    """The number of resampling draws behind ``result``'s p-values (None when not a resampling result)."""
    k = getattr(result, "n_resamples", None)
    return k if isinstance(k, int) and not isinstance(k, bool) and k > 0 else None
