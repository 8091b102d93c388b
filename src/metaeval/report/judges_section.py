"""The report section of judges and pairwise preferences: the ranking-with-intervals figure, the ranking
table, the judge audit table (and, when given, the agreement of judges with humans).

:func:`judges_section` builds a page :class:`~metaeval.report.html.Section` from the results of
:func:`metaeval.judges.rank_systems`, :func:`metaeval.judges.judge_audit` and
:func:`metaeval.judges.judge_agreement`; :func:`write_judges_page` writes it as one self-contained HTML page
(``metaeval judge rank --html``). :func:`audit_rows` is the audit table shared with the terminal.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .figures import WIDTH, Figure
from .formats import interval, number
from .html import Cell, Section, Table, number_cell, render_html
from .svg import DIVERGING, PALETTE, figure_svg, new_figure, text

WIN_RATE_MAX_SYSTEMS = 40
"""Above this many systems the page shows no win-rate heat map (its cells would be unreadable)."""

AUDIT_COLUMNS = (
    ("position_consistency", "position consistency"),
    ("preference_fairness", "preference fairness"),
    ("first_rate", "first chosen"),
    ("repetition_stability", "repeat stability"),
    ("length_effect", "length b1 per sd"),
    ("self_preference", "self-preference"),
)


def audit_rows(audit) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Header and text rows of the audit table: a value with its interval where there is one, 'n/a' where
    the measure cannot be computed (the result's notes say why)."""
    header = ("judge", "comparisons", *(label for _, label in AUDIT_COLUMNS))
    rows = []
    for row in audit.table.to_dict("records"):
        cells = [str(row["judge"]), str(row["comparisons"])]
        for key, _ in AUDIT_COLUMNS:
            value = row.get(key, float("nan"))
            low, high = row.get(f"{key}_low"), row.get(f"{key}_high")
            shown = number(value, 3)
            if shown != "n/a" and low is not None and np.isfinite(low):
                shown += f" {interval(low, high)}"
            cells.append(shown)
        rows.append(tuple(cells))
    return header, rows


def ranking_figure(ranking, key: str = "judges-ranking") -> Figure:
    """Each system's Bradley-Terry score (dot) and bootstrap interval (bar), best at the top, with its rank
    range on the right; systems of different connected groups in different colours."""
    n = len(ranking.systems)
    height = max(2.2, 0.9 + 0.24 * n)
    y = np.arange(n)[::-1]
    with new_figure(WIDTH * 0.75, height) as (fig, ax):
        colours = [PALETTE[int(c) % len(PALETTE)] for c in ranking.component]
        low, high = ranking.ci
        ok = np.isfinite(low) & np.isfinite(high)
        for k in range(n):
            if ok[k]:
                ax.hlines(y[k], low[k], high[k], color=colours[k], linewidth=1.8, alpha=0.8)
        ax.scatter(ranking.scores, y, color=colours, s=18, zorder=3)
        ax.set_yticks(y)
        ax.set_yticklabels([text(s) for s in ranking.systems])
        ax.axvline(0, color="#888888", linewidth=0.8)
        ax.set_xlabel("Bradley-Terry score (log-strength, centred)")
        right = ax.twinx()
        right.set_ylim(ax.get_ylim())
        right.set_yticks(y)
        right.set_yticklabels([f"{lo}-{hi}" if lo != hi else str(lo) for lo, hi in zip(ranking.rank_low,
                                                                                       ranking.rank_high)])
        right.set_ylabel(f"rank ({ranking.confidence_level:.0%} interval)")
        caption = (f"Bradley-Terry scores with {ranking.confidence_level:.0%} percentile intervals ({ranking.resampling}"
                   f" bootstrap, {ranking.n_resamples} resamples; ties: {ranking.ties_model}); right: rank intervals.")
        svg = figure_svg(fig, key=key, alt="Ranking of the systems with score intervals")
    return Figure(key, svg, "Ranking of the systems with score intervals", caption)


def win_rate_figure(ranking, key: str = "judges-win-rates") -> Figure:
    """Observed win rate of each row system against each column system (ties half), best systems first;
    blank where the two were never compared."""
    n = len(ranking.systems)
    size = max(3.0, 1.2 + 0.32 * n)
    with new_figure(min(size + 1.5, 10.0), size) as (fig, ax):
        rates = np.ma.masked_invalid(ranking.win_rates)
        image = ax.imshow(rates, cmap=DIVERGING, vmin=0.0, vmax=1.0)
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xticklabels([text(s) for s in ranking.systems], rotation=90)
        ax.set_yticklabels([text(s) for s in ranking.systems])
        if n <= 16:
            for r in range(n):
                for c in range(n):
                    if np.isfinite(ranking.win_rates[r, c]):
                        ax.text(c, r, f"{ranking.win_rates[r, c]:.2f}", ha="center", va="center", fontsize=7)
        fig.colorbar(image, ax=ax, fraction=0.04, label="share of comparisons won by the row (ties half)")
        svg = figure_svg(fig, key=key, alt="Win rates of every pair of systems")
    return Figure(key, svg, "Win rates of every pair of systems",
                  "Share of the comparisons of row vs column won by the row system (a tie counts half); blank:"
                  " never compared. Systems in ranking order.")


def _ranking_table(ranking) -> Table:
    rows = tuple(
        (Cell(str(ranking.ranks[k]), int(ranking.ranks[k])), Cell(s, s),
         number_cell(float(ranking.scores[k]), sub=interval(ranking.ci[0][k], ranking.ci[1][k])),
         Cell(f"{ranking.rank_low[k]}-{ranking.rank_high[k]}", int(ranking.rank_low[k])) if ranking.has_intervals
         else Cell("n/a", ""),
         number_cell(float(ranking.rank_probabilities[k, ranking.ranks[k] - 1]), 2),
         Cell(f"{ranking.wins[k]}-{ranking.losses[k]}-{ranking.ties[k]}", int(ranking.wins[k])))
        for k, s in enumerate(ranking.systems))
    return Table("judges-ranking-table", "Ranking", ("rank", "system", "score", "rank interval", "P(this rank)",
                                                     "wins-losses-ties"), rows,
                 (True, False, True, True, True, True))


def _audit_table(audit) -> Table:
    header, rows = audit_rows(audit)
    cells = tuple(tuple(Cell(value, value) for value in row) for row in rows)
    return Table("judges-audit", "Judge audit", header, cells, (False,) + (True,) * (len(header) - 1), wide=True)


def _agreement_table(agreement) -> Table:
    rows = []
    for row in agreement.table.to_dict("records"):
        def cell(name, row=row):
            return number_cell(row.get(name, float("nan")),
                               sub=interval(row.get(f"{name}_low"), row.get(f"{name}_high")) if f"{name}_low" in row
                               else "")
        rows.append((Cell(str(row.get("rank_range", "")), row.get("rank", 0)), Cell(row["judge"], row["judge"]),
                     Cell(str(row["keys"]), row["keys"]), cell("accuracy"), cell("accuracy_no_ties"), cell("kappa"),
                     number_cell(row.get("alpha", float("nan"))), cell("vote_agreement"),
                     cell("vote_agreement_no_ties"), cell("ranking_tau")))
    h = agreement.human_agreement
    if h:
        rows.append((Cell("", 0), Cell("humans vs humans", ""), Cell(str(h.get("vote_pairs", "")), 0),
                     Cell("", ""), Cell("", ""), Cell("", ""), Cell("", ""),
                     number_cell(h.get("vote_agreement"), sub=interval(h.get("vote_agreement_low"),
                                                                       h.get("vote_agreement_high"))),
                     number_cell(h.get("vote_agreement_no_ties"), sub=interval(h.get("vote_agreement_no_ties_low"),
                                                                               h.get("vote_agreement_no_ties_high"))),
                     Cell("", "")))
    names = ", ".join(agreement.humans) if len(agreement.humans) <= 6 else (
        ", ".join(agreement.humans[:3]) + f" and {len(agreement.humans) - 3} more")
    return Table("judges-agreement", f"Judges against the humans ({names})",
                 ("rank", "judge", "keys", "accuracy", "accuracy (no ties)", "Cohen's kappa", "Krippendorff's alpha",
                  "votes (S1)", "votes (S2)", "ranking tau"), tuple(rows),
                 (True, False, True, True, True, True, True, True, True, True), wide=True)


def judges_section(ranking, audit=None, agreement=None, *, command: str = "") -> Section:
    """The page section of a ranking (and optionally the audit and the agreement with humans)."""
    tables = [_ranking_table(ranking)]
    notes: list[str] = []
    signatures = [("ranking", str(ranking.signature))]
    if agreement is not None:
        tables.append(_agreement_table(agreement))
        split = agreement.signature.as_dict().get("even_split", "tie")
        notes.append("Accuracy, kappa and alpha: against the humans' majority verdict of each key, an even split of"
                     " their votes " + ("counting half for each side (MT-Bench's rule)." if split == "half"
                                        else "being a tie."))
        notes.extend(agreement.notes)
        signatures.append(("agreement", str(agreement.signature)))
    if audit is not None:
        tables.append(_audit_table(audit))
        notes.extend(audit.notes)
        signatures.append(("audit", str(audit.signature)))
    notes.extend(ranking.notes)
    if ranking.left_out:
        notes.append(f"Systems without any comparison, left out: {', '.join(ranking.left_out)}.")
    figures = (ranking_figure(ranking),)
    if len(ranking.systems) <= WIN_RATE_MAX_SYSTEMS:
        figures += (win_rate_figure(ranking),)
    facts = (("systems", str(len(ranking.systems))), ("comparisons", str(int(ranking.comparisons.sum() // 2))),
             ("tie model", ranking.ties_model), ("bootstrap", f"{ranking.resampling}, {ranking.n_resamples}"))
    return Section(
        "judges", "Judges and pairwise preferences",
        question="Which systems do the comparisons prefer, how sure is that order, and can the judges be trusted?",
        paragraphs=("Bradley-Terry maximum likelihood (Bradley & Terry 1952) with percentile bootstrap intervals of"
                    " every score and rank; the audit measures position consistency and preference fairness (Shi et"
                    " al. 2024), repetition stability, length bias (logistic regression with cluster-robust"
                    " intervals) and self-preference where the data allow it.",),
        facts=facts, figures=figures, tables=tuple(tables), notes=tuple(notes),
        signatures=tuple(signatures), command=command)


@dataclass(frozen=True)
class JudgesPart:
    """The judges' part of a report: a ranking, the audit and (with humans named) the agreement."""

    ranking: Any
    audit: Any
    agreement: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"ranking": self.ranking.to_dict(), "audit": self.audit.to_dict(),
                "agreement": None if self.agreement is None else self.agreement.to_dict()}


def judges_part(comparisons, *, humans=None, n_resamples: int, seed: Any = None) -> JudgesPart:
    """Rank the systems of ``comparisons`` (every judge pooled, or the ``humans`` when named), audit every
    judge and, with ``humans``, measure the other judges' agreement with them; one seed for all three."""
    from ..judges import judge_agreement, judge_audit, rank_systems
    from ..stats.resampling.draws import check_rng

    _, seed = check_rng(seed)
    seed = seed if isinstance(seed, int) else None
    ranking = rank_systems(comparisons, judges=humans, n_resamples=n_resamples, rng=seed)
    seed = ranking.signature.as_dict().get("seed", seed)
    seed = seed if isinstance(seed, int) else None
    agreement = None
    if humans is not None and any(j not in comparisons.judge_names(humans, param="humans")
                                  for j in comparisons.judges):
        agreement = judge_agreement(comparisons, humans=humans, n_resamples=n_resamples, rng=seed)
    audit = judge_audit(comparisons, n_resamples=n_resamples, rng=seed)
    return JudgesPart(ranking, audit, agreement)


def judges_report_section(part: JudgesPart) -> Section:
    """The judges' section of the report page (:func:`judges_section` of the part)."""
    return judges_section(part.ranking, part.audit, part.agreement)


def write_judges_page(path: str | Path, ranking, audit=None, agreement=None, *, command: str = "",
                      beside=()) -> Path:
    """Write :func:`judges_section` as one self-contained HTML page, atomically; returns the path. ``beside``:
    the files written beside the page with the same numbers, named in its footer (none by default)."""
    from ..runtime.files import write_text_atomic

    page = render_html(title="metaeval: judges and pairwise preferences", subtitle=str(ranking.signature),
                       sections=[judges_section(ranking, audit, agreement, command=command)], beside=beside)
    return write_text_atomic(Path(path), page)

