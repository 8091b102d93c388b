"""The sections of the HTML report, from a :class:`~metaeval.report.build.Report`.

Order: dataset summary; correlation table; forest plots; significance heat map; the analyses (in
:data:`~metaeval.report.analysis_sections.ANALYSES` order); signatures and the command that reproduces
the page.
"""
from __future__ import annotations

import math
from dataclasses import replace

from .._version import __version__
from ..errors import require_module
from .figures import forest_plot, significance_heatmap
from .formats import number
from .html import Cell, Section, Table, number_cell, render_html

SECTION_TITLES = {
    "dataset": "Dataset",
    "correlations": "Correlations with intervals",
    "forest": "Confidence intervals by level",
    "significance": "Which metric is better? Significance matrix and clusters",
    "significance-summary": "Which metric is better per input? Summary-level significance matrix and clusters",
    "reproduce": "Signatures and reproduction",
}


def _missing_human(scorer: dict, cells: int) -> str:
    """``0 of 640`` cells, and with several annotators the missing ratings too (``5 of 1920 ratings``)."""
    text = f"{scorer['missing_cells']} of {cells}"
    if scorer["annotators"] > 1:
        ratings = scorer.get("missing_ratings", scorer["missing_cells"] * scorer["annotators"])
        text += f" ({ratings} of {cells * scorer['annotators']} annotator ratings missing)"
    return text


def _dataset_section(report) -> Section:
    d = report.dataset
    human = report.human
    scorers = {s["scorer"]: s for s in d["scorers"]}
    metrics = d["metrics"]
    missing_metrics = sum(scorers[m]["missing_cells"] for m in metrics)
    cells = d["systems"] * d["inputs"]
    facts = [
        ("dataset", d.get("name") or "user data"),
        ("systems x inputs", f"{d['systems']} x {d['inputs']} ({cells} cells)"),
        ("human score", f"{human} ({scorers[human]['annotators']} annotator(s) per cell, aggregated by"
                        f" {d['aggregation']})"),
        ("missing human cells", _missing_human(scorers[human], cells)),
        ("metrics", f"{len(metrics)} ({missing_metrics} missing cells in all)"),
    ]
    if d.get("description"):
        facts.append(("subset", d["description"]))
    notes = []
    agreement = d.get("agreement")
    if agreement is not None:
        facts.append(("annotator agreement", f"Krippendorff's alpha ({agreement['level']}) ="
                      f" {number(agreement['alpha'])} over {agreement['n_units']} cells, up to"
                      f" {agreement['n_coders']} annotators each"))
    elif scorers[human]["annotators"] < 2:
        notes.append(f"Annotator agreement is not shown: {human} has one score per cell (no annotator axis).")
    else:
        notes.append("Annotator agreement is not shown: metaeval.human is not available in this install.")
    system_rows = tuple(
        (Cell(s["system"], s["system"]), number_cell(s["human_mean"]), Cell(str(s["rank"]), s["rank"]),
         Cell(str(s["missing"]), s["missing"], css="warn" if s["missing"] else ""))
        for s in d["system_scores"]
    )
    systems = Table("systems", f"Systems: mean {human} over their judged inputs, and rank (1 = best)",
                    ("system", f"mean {human}", "rank", "missing cells"), system_rows, (False, True, True, True))
    scorer_rows = tuple(
        (Cell(s["scorer"], s["scorer"]), Cell("human" if s["human"] else "metric"),
         Cell(str(s["annotators"]), s["annotators"]), Cell(str(s["missing_cells"]), s["missing_cells"]),
         Cell("yes" if s["scorer"] == human or s["scorer"] in metrics else "no"))
        for s in d["scorers"]
    )
    scorer_table = Table("scorers", f"All {len(d['scorers'])} scorers of the dataset",
                         ("scorer", "kind", "annotators", "missing cells", "in this report"), scorer_rows,
                         (False, False, True, True, False), collapsed=True)
    return Section(
        "dataset", SECTION_TITLES["dataset"],
        question="What was judged, by whom, and what is missing?",
        facts=tuple(facts), tables=(systems, scorer_table), notes=tuple(notes),
        signatures=(("the agreement", agreement["signature"]),) if agreement else (),
    )


def _ci_text(result) -> str:
    if result.ci is None:
        return ""
    return f"[{number(result.ci[0], 2)}, {number(result.ci[1], 2)}]"


def _corpus_note(report) -> tuple[str, ...]:
    corpus = report.settings.get("corpus_metrics") or []
    if not corpus:
        return ()
    return (f"Corpus metrics ({', '.join(corpus)}): a system's score is the metric computed once from its"
            " sufficient statistics summed over the inputs (as sacrebleu's corpus score), not the mean of"
            " sentence scores, in the system-level correlations, the significance matrix and the analyses"
            " that rank systems, and inside every resample of the inputs; summary-level cells use the"
            " sentence scores.",)


def _correlation_section(report) -> Section:
    table = report.table
    ranks = {}
    if report.comparison is not None:
        ranks = dict(zip(report.comparison.metrics, report.comparison.ranks))
    tables = []
    for level in table.levels:
        rows = []
        for metric in table.metrics:
            cells = [Cell(metric, metric)]
            skipped = 0
            for coefficient in table.coefficients:
                r = table.get(metric, level, coefficient)
                skipped = max(skipped, r.n_skipped)
                cells.append(number_cell(r.statistic, sub=_ci_text(r)))
            cells.append(Cell(str(skipped), skipped, css="warn" if skipped else ""))
            if ranks and level == "system":  # the ranks are the system-level matrix's: only on that table
                rank = ranks.get(metric)
                cells.append(Cell(str(rank), rank))
            rows.append(tuple(cells))
        header = ("metric",) + table.coefficients + ("skipped",) + (("system rank",) if ranks and level == "system" else ())
        numeric = (False,) + (True,) * (len(header) - 1)
        unit = "inputs" if level == "summary" else "systems" if level == "by-system" else "groups"
        tables.append(Table(f"correlations-{level}",
                            f"{level.capitalize()} level (skipped = {unit} whose correlation is undefined)",
                            header, tuple(rows), numeric))
    first = table.results[0]
    method = "no interval"
    if first.ci is not None:
        method = f"{first.confidence_level:.0%} {first.interval_method} percentile intervals, {first.n_resamples} resamples"
    return Section(
        "correlations", SECTION_TITLES["correlations"],
        question=f"How well does each metric agree with {table.human}, and how sure are we?",
        paragraphs=(
            f"Each cell is the correlation of a metric with {table.human} and, below it, its {method}"
            " (Deutsch, Dror & Roth 2021: BOOT-BOTH resamples systems and inputs together; with one input,"
            " BOOT-SYSTEMS resamples the systems only). System level"
            " correlates the systems' mean scores; summary level averages, over inputs, the correlation"
            " across systems on that input.",
            "Click a column header to sort; click again to reverse. 'system rank' (system-level table only)"
            " is the metric's significance-cluster rank from the system-level matrix below.",
            f"The same system-level statistic appears again in the Delta and top-k sections with BOOT-INPUTS"
            f" intervals (only the inputs are resampled, the systems are fixed): those answer 'how much does it"
            f" depend on which inputs were judged', these ({first.interval_method if first.ci is not None else 'none'})"
            " also count the sampling of systems, so they are usually wider.",
        ) + _corpus_note(report),
        tables=tuple(tables), signatures=(("every correlation", str(table.signature)),),
    )


def _forest_section(report) -> Section:
    table = report.table
    coefficient = report.settings.get("coefficient", table.coefficients[-1])
    figures = tuple(forest_plot(table, level, order_by=coefficient) for level in table.levels)
    return Section(
        "forest", SECTION_TITLES["forest"],
        question="Where do the intervals overlap, and how wide are they at each level?",
        paragraphs=("One figure per level, one panel per coefficient. A bar that crosses 0 means the data"
                    " cannot rule out no correlation; wide bars mean few systems or inputs.",),
        figures=figures,
    )


def _significance_section(report, result=None, key: str = "significance") -> Section:
    result = report.comparison if result is None else result
    stats = [c.statistic for c in result.correlations]
    order = sorted(range(len(result.metrics)),
                   key=lambda i: (result.ranks[i], -(stats[i] if not math.isnan(stats[i]) else -math.inf)))
    rows = []
    for position, i in enumerate(order):
        beaten = [result.metrics[j] for j in order if result.significant[i, j]]
        rows.append((Cell(str(result.ranks[i]), result.ranks[i]), Cell(result.rank_ranges[i], result.ranks[i]),
                     Cell(str(position + 1), position + 1),
                     Cell(result.metrics[i], result.metrics[i]), number_cell(stats[i]),
                     Cell(str(len(beaten)), len(beaten)), Cell(", ".join(beaten) or "-", css="list")))
    ranking = Table("ranks", "Significance clusters: rank, correlation, and the metrics each one significantly beats",
                    ("rank", "positions", "#", "metric", result.coefficient, "beats", "beaten metrics"),
                    tuple(rows), (True, True, True, False, True, True, False), wide=True)
    n_resamples = f", {result.n_resamples} resamples" if result.n_resamples else ""
    notes = [f"warning: {line}" for line in result.warnings]  # e.g. no comparison can be significant
    return Section(
        key, SECTION_TITLES[key],
        question=f"Is a metric's higher {result.level}-level correlation with {result.human} real, or noise?",
        paragraphs=(
            f"Every ordered pair (row, column) is tested for H1: r(row) > r(column) with the {result.test} test"
            f" ({result.method or 'analytic'}{n_resamples}; Deutsch, Dror & Roth 2021), and the p-values are"
            f" corrected with {result.correction} over {'each row' if result.family == 'row' else 'the matrix'}."
            " Clusters follow mt-metrics-eval: going down the metrics sorted by correlation, a metric opens a"
            " new cluster only when a metric of the current cluster significantly beats it; rank = 1 + the"
            f" number of clusters above, and 'positions' is the range its cluster spans"
            f" ({max(result.ranks)} clusters of {len(result.metrics)} metrics).",
        ),
        figures=(significance_heatmap(result),), tables=(ranking,), notes=tuple(notes),
        signatures=(("the significance matrix", str(result.signature)),),
    )


def _reproduce_section(report, sections: list[Section], warnings: tuple[str, ...] = ()) -> Section:
    rows = []
    for section in sections:
        for name, signature in section.signatures:
            rows.append((Cell(section.title), Cell(name), Cell(signature, css="sig")))
    cells = tuple((Cell(r.metric), Cell(r.level), Cell(r.coefficient), Cell(str(r.signature), css="sig"))
                  for r in report.table.results)
    return Section(
        "reproduce", SECTION_TITLES["reproduce"],
        question="How exactly was every number computed, and how do I get this page again?",
        paragraphs=(f"Run this with metaeval {__version__} to rebuild the page and its JSON and CSV files"
                    " (same seed, same numbers):",),
        command=report.command,
        tables=(
            Table("signatures", "Signatures of the report's blocks", ("section", "what", "signature"),
                  tuple(rows), (False, False, False), sortable=False, wide=True),
            Table("cell-signatures", f"Signature of each of the {len(cells)} correlations",
                  ("metric", "level", "coefficient", "signature"), cells, (False,) * 4, collapsed=True, wide=True),
        ),
        notes=tuple(f"{name}: not in this report: {reason}" for name, reason in report.omitted.items()
                    if reason != "not requested.") + tuple(f"warning: {w}" for w in warnings),
    )


def section_count(report) -> int:
    """How many sections the page of ``report`` has (for a progress bar)."""
    return (4 + (report.comparison is not None) + (getattr(report, "summary_comparison", None) is not None)
            + len(report.analyses) + (getattr(report, "spans", None) is not None))


def _steps(report) -> dict[str, str]:
    """The step of :func:`~metaeval.report.build.build_report` whose warnings each section shows (the
    warnings are recorded as ``"step: message"``)."""
    from .analysis_sections import ANALYSES

    return {"annotator agreement": "dataset", "correlations": "correlations", "significance matrix": "significance",
            "significance matrix (summary level)": "significance-summary",
            **{spec.title: name for name, spec in ANALYSES.items()}}


def _placed_warnings(report, sections: list[Section]) -> tuple[list[Section], tuple[str, ...]]:
    """Each warning beside what it qualifies: in the notes of the section of its step; the warnings of no
    section shown stay for the last section."""
    keys = {section.key for section in sections}
    steps = _steps(report)
    placed: dict[str, list[str]] = {}
    rest = []
    for warning in report.warnings:
        step, _, message = warning.partition(": ")
        key = steps.get(step)
        if key in keys:
            placed.setdefault(key, []).append(f"warning: {message}")
        else:
            rest.append(warning)
    out = [replace(section, notes=section.notes + tuple(placed.get(section.key, ()))) for section in sections]
    return out, tuple(rest)


def report_sections(report, advance=None) -> list[Section]:
    """Every section of the page, in order; ``advance()`` is called after each one. Each warning of the
    report is shown in the section it qualifies (the interval warnings under the correlation tables, the
    significance warnings under their matrix, ...)."""
    from .analysis_sections import ANALYSES

    builders = [_dataset_section, _correlation_section, _forest_section]
    if report.comparison is not None:
        builders.append(_significance_section)
    if getattr(report, "summary_comparison", None) is not None:
        builders.append(lambda r: _significance_section(r, r.summary_comparison, "significance-summary"))
    for name, spec in ANALYSES.items():
        if name in report.analyses:
            builders.append(lambda r, spec=spec, name=name: spec.section(r.analyses[name], r))
    if getattr(report, "mt_audit", None) is not None:  # an MT protocol run's audit (metaeval report --mt-scores)
        from .mt_audit_section import mt_audit_section

        builders.append(lambda r: mt_audit_section(r.mt_audit))
    if getattr(report, "spans", None) is not None:
        from .spans_section import spans_section

        builders.append(lambda r: spans_section(r.spans))
    if getattr(report, "judges", None) is not None:
        from .judges_section import judges_report_section

        builders.append(lambda r: judges_report_section(r.judges))
    sections = []
    for build in builders:
        sections.append(build(report))
        if advance is not None:
            advance()
    sections, rest = _placed_warnings(report, sections)
    sections.append(_reproduce_section(report, sections, rest))
    if advance is not None:
        advance()
    return sections


def _require_dependencies() -> None:
    for name in ("matplotlib", "jinja2"):
        require_module(name, purpose="The HTML report")


def render_report(report, advance=None, beside: tuple[str, ...] = ()) -> str:
    """The self-contained HTML page of ``report`` (``advance()`` is called after each section); its footer names
    the files ``beside`` it (those :func:`~metaeval.report.build.write_report` writes with it)."""
    _require_dependencies()
    d = report.dataset
    name = d.get("name") or "user data"
    title = f"metaeval report: {name}, {report.human}"
    settings = report.settings
    subtitle = (f"{d['systems']} systems x {d['inputs']} inputs, {len(d['metrics'])} metrics;"
                f" {settings.get('n_resamples')} resamples, seed {settings.get('seed')},"
                f" preset {settings.get('preset')}; metaeval {__version__}")
    return render_html(title=title, subtitle=subtitle, sections=report_sections(report, advance), beside=beside)
