"""`metaeval judge rank|agree|audit|alt-test`: judges and pairwise preferences (docs/judges.md)."""
from __future__ import annotations

import functools
from collections.abc import Callable

import click
from rich.table import Table
from rich.text import Text

from .. import defaults
from ..errors import ParameterError
from ..runtime.output_sets import when_written
from ..vocabulary import EVEN_SPLITS, TIE_MODELS
from .analysis_output import footer, interval, number, output_options, render
from .common import declare, group, option, options, resamples_option, say, tie_tolerance_option
from .progress import progress_bar, progress_option

_ROLES = ("input", "first", "second", "judge", "verdict", "repeat", "first_length", "second_length", "shown_first")
_SCORE_READING = ("system_column", "annotator_column", "layout", "rename", "allow_unmatched")
"""The reading options of --scores besides --input-column and --where (which serve the comparison file too)."""


def comparison_options(command: Callable) -> Callable:
    """Where the comparisons come from: --comparisons FILE (with its column mapping and --where), or the
    scorers of --dataset / --scores turned into judges (--scorer, --annotators; the score file read with
    the reading options of every command, --input-column and --where included). A data error names the
    one file the data came from."""

    @functools.wraps(command)
    def wrapper(*args, comparisons, where, dataset, scores, scorer, annotators, verdict_map,
                tie_tolerance=defaults.TIE_TOLERANCE, **kwargs):
        from .source import Reading, Source, located

        columns = {role: kwargs.pop(f"{role}_column") for role in _ROLES}
        reading = {name: kwargs.pop(name) for name in _SCORE_READING}
        source = Source(dataset=dataset, scores=(scores,) if scores else ())
        with located(str(comparisons[0]) if len(comparisons) == 1 else source.origin):
            if comparisons:
                given = [f"--{name.replace('_', '-')}" for name, values in reading.items() if values]
                if given:
                    raise ParameterError(f"`{given[0]}` applies to `--scores`; got it with --comparisons.")
                data = _from_comparisons(comparisons, {r: c for r, c in columns.items() if c}, where, source,
                                         scorer, annotators, verdict_map)
            else:
                if any(c for role, c in columns.items() if role != "input") or verdict_map:
                    raise ParameterError("the column options of the comparison roles and `--verdict-map` apply to"
                                         " `--comparisons`; got them without it.")
                reading = Reading.of({**reading, "input_column": tuple(columns["input"]), "where": where})
                source = Source(dataset=dataset, scores=source.scores, reading=reading)
                if kwargs.get("alignment", "accuracy") != "accuracy":  # the alt-test on the ratings themselves
                    data = _ratings_from_scores(source, scorer)
                else:
                    data = _from_scores(source, scorer, annotators, tie_tolerance)
            return command(*args, data=data, **kwargs)

    decorators = [
        option("comparisons", multiple=True,
               help="A comparison file: one row per comparison (CSV, TSV, JSON Lines, JSON array, Parquet; FastChat's"
                    " pairwise judgment files as they are); repeatable: the files are combined."),
        option("input_column", metavar="COLUMN",
               help="The comparison file's column of the input role; repeatable: an input named by several columns"
                    " (question and turn)."),
        declare("verdict_map", dict(multiple=True, metavar="OLD=NEW",
                                    help="Read the verdict label OLD as NEW (first, second, tie, or drop to leave the"
                                         " rows out; repeatable), e.g. 'tie (inconsistent)=tie', error=drop.")),
        options(*(f"{role}_column" for role in _ROLES[1:-1])),
        declare("shown_first_column", dict(metavar="COLUMN",
                                           help="The comparison file's column naming the system shown first, when"
                                                " the two system columns are not in the order shown (position"
                                                " measures need that order).")),
        option("where", metavar="COLUMN=VALUE", help="Keep only the comparison rows whose COLUMN is VALUE (repeatable)."),
        option("dataset", help="A packaged dataset whose scorers become judges (with --scorer)."),
        option("scores", multiple=False, metavar="PATH", type=click.Path(dir_okay=False),
               help="A score file whose scorers become judges."),
        option("scorer", multiple=True,
               help="A scorer of --dataset / --scores that judges every pair of systems on every input (repeatable)."),
        option("annotators"),
        options(*_SCORE_READING),
    ]
    for decorator in reversed(decorators):
        wrapper = decorator(wrapper)
    return wrapper


def _from_comparisons(comparisons, columns, where, source, scorers, annotators, verdict_map):
    from ..data.columns import parse_where
    from ..judges import read_comparisons
    from ..judges.reader import CLI_OPTION_NAMES

    if source.dataset is not None or source.scores or scorers or annotators:
        raise ParameterError("`--comparisons` must not be combined with `--dataset`, `--scores`, `--scorer` or"
                             " `--annotators`; got both.")
    mapping = {}
    for item in verdict_map:
        old, sep, new = item.rpartition("=")
        if not sep or not old.strip():
            raise ParameterError(f"`--verdict-map` must be OLD=NEW; got {item!r}.")
        mapping[old] = new
    paths = list(comparisons)
    return read_comparisons(paths[0] if len(paths) == 1 else paths, columns=columns, where=parse_where(where),
                            verdict_map=mapping, option_names=CLI_OPTION_NAMES)


def _from_scores(source, scorers, annotators, tie_tolerance):
    from ..judges import comparisons_from_scores
    from .source import load_source

    if source.dataset is None and not source.scores:
        raise ParameterError("`--comparisons`, `--dataset` or `--scores` must be given; got none.")
    if not scorers:
        raise ParameterError("`--scorer` must name the scorers that judge (repeatable); got none.")
    ds, _ = load_source(source, human_optional=True)
    return comparisons_from_scores(ds, list(scorers), annotators=annotators, tie_tolerance=tie_tolerance)


def _ratings_from_scores(source, scorers):
    """The numeric ratings of the scorers (every annotator a rater of its own): no pairs are formed, so a
    file of items rated by several annotators (one system) is tested as it is."""
    from .source import load_source

    if not scorers:
        raise ParameterError("`--scorer` must name the scorers that rate (repeatable); got none.")
    ds, _ = load_source(source, human_optional=True)
    for name in scorers:
        ds.require(name, param="--scorer")
    return ds.subset(scorers=list(scorers))


@group()
def judge():
    """Rank systems from pairwise comparisons; judges against humans, audits, alt-test.

    The comparisons come from a comparison file (--comparisons) or from the scorers of a dataset or score
    file (--scorer): every scorer judges every pair of systems on every input (docs/judges.md)."""


def _resampling_options(command):
    return option("confidence_level")(command)


def seed_option(command):
    """--seed, default None: fresh entropy, the seed drawn recorded in the signature (the library's rule)."""
    return option("seed", default=None, show_default=False,
                  help="Seed of every resampling (default: a fresh seed, recorded in the signature).")(command)


def _check_resamples(data, n_resamples, clusters: str = "inputs", ranking: bool = False):
    """Refuse up front a number of resamples whose arrays cannot fit in memory (as `mt` does), and for a
    ranking more systems than a Bradley-Terry fit takes."""
    from ..judges.resampling import check_memory, check_systems

    if ranking:
        check_systems(len(data.systems), param="--comparisons")
    n_clusters = len(data.judges) if clusters == "judges" else len(data.inputs)
    check_memory(n_resamples, len(data.systems), n_clusters, param="--n-resamples", pairs=ranking)


@judge.command()
@tie_tolerance_option
@comparison_options
@option("judge", help="Rank with these judges' comparisons only (repeatable).")
@option("ties", type=click.Choice(TIE_MODELS), default=defaults.TIE_MODEL, show_default=True,
        help="Ties as half a win each, Davidson's tie model, or left out.")
@options("resampling", "regularization")
@option("html", help="Also write an HTML page with the ranking figure and the judge audit table.")
@_resampling_options
@resamples_option
@seed_option
@progress_option
@output_options
def rank(data, judge, ties, resampling, regularization, html, confidence_level, n_resamples, seed, format, output):
    """Rank systems by Bradley-Terry scores, with bootstrap intervals of scores and ranks."""
    from ..judges import judge_audit, rank_systems

    judges, fmt = judge, format
    _check_resamples(data, n_resamples, resampling, ranking=True)
    with progress_bar() as bar:
        result = rank_systems(data, judges=judges or None, ties=ties, resampling=resampling, n_resamples=n_resamples,
                              confidence_level=confidence_level, regularization=regularization, rng=seed,
                              progress=bar.task("bootstrap", total=n_resamples) if n_resamples else None)
    render(result, fmt, result.to_frame(), _rank_table, output)
    if html:
        from ..report.judges_section import write_judges_page

        audit = judge_audit(data, judges or None, n_resamples=n_resamples, confidence_level=confidence_level,
                            rng=seed)
        page = write_judges_page(html, result, audit)
        when_written(lambda: say(f"wrote {page}", err=True))  # once the output set is written


def _rank_table(result):
    table = Table(title=f"Bradley-Terry ranking ({result.ties_model} ties; {result.resampling} bootstrap,"
                        f" {result.n_resamples} resamples)", title_justify="left")
    for column in ("rank", "system", "score", "interval", "rank range", "W-L-T"):
        table.add_column(column, justify="left" if column == "system" else "right")
    several = result.component.max() > 0
    for k, system in enumerate(result.systems):
        label = f"{system} [{result.component[k] + 1}]" if several else system
        places = f"{result.rank_low[k]}-{result.rank_high[k]}" if result.has_intervals else "n/a"
        table.add_row(str(result.ranks[k]), label, number(result.scores[k]), interval(result.ci[0][k], result.ci[1][k]),
                      places, f"{result.wins[k]}-{result.losses[k]}-{result.ties[k]}")
    notes = list(result.notes)
    if result.ties_model == "davidson":
        notes.append(f"Davidson's tie parameter nu = {result.nu:.3f}.")
    if result.left_out:
        notes.append(f"left out (no comparison): {', '.join(result.left_out)}.")
    if several:
        notes.append("[k]: group of connected systems; scores and ranks compare only within a group.")
    return [table, *footer(result, notes)]


@judge.command()
@tie_tolerance_option
@comparison_options
@option("judge", help="A judge to evaluate (repeatable; default: every non-human).")
@option("human", multiple=True, required=True,
        help="A human annotator (repeatable); their comparisons vote the human verdict.")
@option("ties", type=click.Choice(TIE_MODELS), default=defaults.TIE_MODEL, show_default=True,
        help="Tie model of the Bradley-Terry rankings compared.")
@option("n_permutations")
@option("correction", help="Correction of the judge-vs-judge p-values.")
@declare("even_split", dict(type=click.Choice(EVEN_SPLITS), default=defaults.EVEN_SPLIT, show_default=True,
                            help="The humans' majority of a key whose votes split evenly: half (MT-Bench: agreeing"
                                 " with one side counts half) or a tie."))
@option("html", help="Also write an HTML page: the humans' ranking figure, the agreement and the judges' audit.")
@_resampling_options
@resamples_option
@seed_option
@progress_option
@output_options
def agree(data, judge, human, ties, n_permutations, correction, even_split, html, confidence_level, n_resamples, seed,
          format, output):
    """Agreement of judges with human annotators; judge-vs-judge tests and clusters."""
    from ..judges import judge_agreement, judge_audit, rank_systems

    judges, humans, fmt = judge, human, format
    _check_resamples(data, max(n_resamples, n_permutations))
    try:
        named = set(data.judge_names(humans, param="--human"))
        shown = 1 + (len(judges) if judges else sum(j not in named for j in data.judges))
    except ParameterError:
        shown = None  # the library names the problem
    with progress_bar() as bar:
        result = judge_agreement(data, judges or None, humans=humans, ties=ties, n_resamples=n_resamples,
                                 n_permutations=n_permutations, confidence_level=confidence_level,
                                 correction=correction, even_split=even_split, rng=seed,
                                 progress=bar.task("judges", total=shown))
    render(result, fmt, result.to_frame(), _agree_table, output)
    if html:
        from ..report.judges_section import write_judges_page

        ranking = rank_systems(data, judges=humans, ties=ties, n_resamples=n_resamples,
                               confidence_level=confidence_level, rng=seed)
        audit = judge_audit(data, list(result.table["judge"]), n_resamples=n_resamples,
                            confidence_level=confidence_level, rng=seed)
        page = write_judges_page(html, ranking, audit, result)
        when_written(lambda: say(f"wrote {page}", err=True))  # once the output set is written


def _agree_table(result):
    from ..report.render import ColumnBlocks

    t = result.table
    title = f"Judges against the humans ({_shortened(result.humans)}); bootstrap over inputs"
    header = ("judge", "rank", "keys", "accuracy", "no ties", "kappa", "alpha", "votes", "votes S2", "rank tau")
    rows = []
    for row in t.to_dict("records"):
        get = lambda name: row.get(name, float("nan"))  # noqa: E731
        with_ci = lambda name: f"{number(get(name))} {interval(get(name + '_low'), get(name + '_high'))}"  # noqa: E731
        rows.append((str(row["judge"]), str(row.get("rank_range", "")), str(row["keys"]), with_ci("accuracy"),
                     number(get("accuracy_no_ties")), number(get("kappa")), number(get("alpha")),
                     with_ci("vote_agreement"), number(get("vote_agreement_no_ties")), with_ci("ranking_tau")))

    def build(chosen):
        table = Table(title=title if not chosen or chosen[0] == 0 else None, title_justify="left")
        shown = [0, *(1 + c for c in chosen)]
        for c in shown:
            table.add_column(header[c], justify="left" if c == 0 else "right", no_wrap=True)
        for row in rows:
            table.add_row(*[row[c] for c in shown])
        return table

    h = result.human_agreement
    split = ("counts half for each side" if result.signature.as_dict().get("even_split") == "half"
             else "is a tie")
    notes = [*result.notes,
             "accuracy, no ties, kappa, alpha: against the humans' majority verdict of each key (an even split"
             f" {split}, --even-split); kappa and alpha count each key in both orientations; votes (S1) / votes S2:"
             " MT-Bench's agreement over every (judge verdict, human vote) pair, with ties / without pairs holding a tie; rank"
             " tau: Kendall tau-b of the two Bradley-Terry rankings; rank: significance clusters of accuracy (paired"
             f" sign-flip tests over inputs, {result.correction}).",
             f"humans vs humans (every pair of human votes of a key): S1 {number(h.get('vote_agreement'))}"
             f" {interval(h.get('vote_agreement_low'), h.get('vote_agreement_high'))} over"
             f" {h.get('vote_pairs', 0)} pairs, S2 {number(h.get('vote_agreement_no_ties'))}"
             f" {interval(h.get('vote_agreement_no_ties_low'), h.get('vote_agreement_no_ties_high'))} over"
             f" {h.get('vote_pairs_no_ties', 0)} pairs."]
    return [ColumnBlocks(build, len(header) - 1), *footer(result, notes)]


def _shortened(names, shown: int = 6) -> str:
    """Names for a title: all of them up to ``shown``, else the first ones and a count."""
    names = list(names)
    if len(names) <= shown:
        return ", ".join(names)
    return ", ".join(names[:3]) + f" and {len(names) - 3} more"


@judge.command()
@tie_tolerance_option
@comparison_options
@option("judge", help="A judge to audit (repeatable; default: every judge).")
@_resampling_options
@resamples_option
@seed_option
@declare("judge_family", dict(multiple=True, metavar="JUDGE=SYSTEM",
                        help="A system of a judge's family, for self-preference (repeatable; default: a judge named"
                             " like a system is that system)."))
@progress_option
@output_options
def audit(data, judge, confidence_level, n_resamples, seed, judge_family, format, output):
    """Position consistency, preference fairness, repetition stability, length bias, self-preference."""
    from ..judges import judge_audit

    judges, fmt = judge, format
    _check_resamples(data, n_resamples)
    with progress_bar() as bar:
        result = judge_audit(data, judges or None, n_resamples=n_resamples, confidence_level=confidence_level,
                             families=_families(judge_family), rng=seed,
                             progress=bar.task("judges", total=len(judges) if judges else len(data.judges)))
    render(result, fmt, result.to_frame(), _audit_table, output)


def _families(items) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in items:
        judge, sep, system = item.partition("=")
        if not sep or not judge or not system:
            raise ParameterError(f"`--judge-family` must be JUDGE=SYSTEM; got {item!r}.")
        out.setdefault(judge, []).append(system)
    return out


def _audit_table(result):
    from ..report.judges_section import audit_rows

    from ..report.render import ColumnBlocks

    header, rows = audit_rows(result)

    def build(chosen):
        table = Table(title="Judge audit" if not chosen or chosen[0] == 0 else None, title_justify="left")
        shown = [0, *(1 + c for c in chosen)]
        for c in shown:
            table.add_column(header[c], justify="left" if c == 0 else "right", no_wrap=True)
        for row in rows:
            table.add_row(*[row[c] for c in shown])
        return table

    return [ColumnBlocks(build, len(header) - 1), *[Text(note, style="dim") for note in result.notes],
            *footer(result)]


@judge.command("alt-test")
@tie_tolerance_option
@comparison_options
@option("judge", multiple=False, required=True, help="The judge that would replace the annotators.")
@option("human", multiple=True, required=True,
        help="A human annotator (repeatable, at least 2; a shell-style pattern such as 'expert_*' names several).")
@option("epsilon")
@option("alpha", default=defaults.ALT_TEST_ALPHA, help="False discovery rate of the Benjamini-Yekutieli correction.")
@declare("min_instances", dict(type=int, default=30, show_default=True,
                               help="Skip (and name) an annotator sharing fewer instances with the judge and another"
                                    " annotator."))
@declare("alignment", dict(type=click.Choice(("accuracy", "neg-rmse")), default="accuracy", show_default=True,
                           help="Alignment with the other annotators: accuracy of the verdicts of each input and"
                                " pair, or minus the RMSE of the numeric ratings (--scorer) of each output; the"
                                " ratings are read as they are (no pairs; one system is enough), each annotator"
                                " of a scorer a rater '<scorer>/<k>'."))
@progress_option
@output_options
def alt_test(data, judge, human, epsilon, alpha, min_instances, alignment, format, output):
    """The Alternative Annotator Test: can the judge replace the annotators? (Calderon et al. 2025)"""
    from ..judges import alt_test as run
    from ..judges.alt_test import alt_test_raters

    candidate, humans, fmt = judge, human, format
    with progress_bar() as bar:
        total = len(alt_test_raters(data, humans, param="--human"))
        result = run(data, candidate, humans=humans, epsilon=epsilon, alpha=alpha, min_instances=min_instances,
                     alignment=alignment, progress=bar.task("annotators", total=total))
    render(result, fmt, result.to_frame(), _alt_table, output)


def _alt_table(result):
    alignment = result.signature.as_dict().get("alignment", "accuracy")
    table = Table(title=f"Alternative Annotator Test of {result.judge} ({alignment})", title_justify="left")
    for column in ("annotator", "instances", "rho judge", "rho human", "t", "p", "p (BY)", "wins"):
        table.add_column(column, justify="left" if column == "annotator" else "right", no_wrap=True)
    for row in result.table.to_dict("records"):
        table.add_row(row["annotator"], str(row["instances"]), number(row["rho_judge"]), number(row["rho_human"]),
                      number(row["t"], 2), number(row["pvalue"], 3), number(row["pvalue_corrected"], 3),
                      ("yes" if row["rejected"] else "no") if row["tested"] else "skipped")
    notes = ["wins: the judge beats this annotator (H0 rejected after the correction)."]
    if result.skipped:
        notes.append(f"skipped (fewer than {result.min_instances} instances, --min-instances):"
                     f" {', '.join(result.skipped)}.")
    return [table, Text(result.verdict), *footer(result, notes)]
