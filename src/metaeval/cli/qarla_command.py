"""`metaeval qarla`: QARLA's QUEEN, KING and JACK of similarity-metric sets (Amigo et al. 2005)."""
from __future__ import annotations

import click
from rich.table import Table

from ..analyses.qarla import qarla as run_qarla
from ..analyses.qarla import qarla_similarities, read_qarla_texts
from ..analyses.qarla_similarity import DEFAULT_SIMILARITIES
from ..errors import ParameterError
from ..report.qarla_figure import check_figure_path, save_qarla_figure
from .analysis_output import footer, number, render
from .common import READING, declare, option, output_options, source_options
from .progress import progress_bar, progress_option
from .source import load_source


@click.command()
@option("texts", required=True,
        help="JSON Lines, one line per (system, input): doc_id, system_id, summary, references (the models),"
             " optionally source; e.g. ../shared/data/summeval/texts.jsonl.")
@declare("similarity", dict(multiple=True, help=f"A similarity metric (repeatable; default:"
                                                f" {', '.join(DEFAULT_SIMILARITIES)}): rouge-<m> or rpre-<m> (inverted"
                                                " ROUGE) with <m> in 1, 2, 3, 4, l, w-1.2, s4, su4 and an optional type"
                                                " .a (none), .b (stopwords removed), .c (and stemmed); tvm-<n>."))
@declare("set", dict(multiple=True, help="A metric set, its similarities joined by '+' (repeatable; default: each"
                                         " similarity alone, then all together)."))
@declare("inputs", dict(type=int, default=None, help="Use the first N inputs of the file (default: all)."))
@source_options(names=("dataset", "dataset_option", "scores", *READING, "human", "aggregation"))
@option("plot", help="Also draw KING / JACK per set and QUEEN against the human to this .png or .svg file.")
@progress_option
@output_options
def qarla(texts, similarity, set, inputs, source, plot, format, output):
    """QARLA: QUEEN, KING and JACK of similarity-metric sets, without human judgments.

    With --dataset or --scores (human scores of the systems), QUEEN is also correlated with the human.
    """
    if plot:
        check_figure_path(plot)
    if source.human and not (source.dataset or source.scores):
        raise ParameterError(f"`--human` needs `--dataset` or `--scores` (the human scores); got --human"
                             f" {source.human!r} alone.")
    candidates, references, sources = read_qarla_texts(texts)
    ds = human = None
    if source.dataset or source.scores:
        ds, human = load_source(source)
    total = len(references) if inputs is None else min(inputs, len(references))
    with progress_bar() as bar:
        sims = qarla_similarities(candidates, references, similarities=similarity or DEFAULT_SIMILARITIES,
                                  inputs=inputs, sources=sources, progress=bar.task("similarities (inputs)", total))
    result = run_qarla(sims, metric_sets=set or None, ds=ds, human=human if ds is not None else None)
    from dataclasses import replace
    from pathlib import Path

    # the texts file: the library sees the texts only (issue 41: a signature names its data)
    result = replace(result, signature=result.signature.with_fields(texts=Path(texts).name))
    if plot:
        save_qarla_figure(result, plot)
    render(result, format, result.to_frame(), _tables, output)


def _tables(result):
    table = Table(title=f"QARLA over {result.n_inputs} inputs, {result.n_models} models, {len(result.systems)} "
                        "systems", title_justify="left")
    human = result.human is not None
    columns = ["metric set", "KING", "JACK", "QUEEN models", "QUEEN systems"] + (["Pearson", "Kendall"] if human else [])
    for column in columns:
        table.add_column(column, justify="left" if column == "metric set" else "right")
    for i, name in enumerate(result.metric_sets):
        row = [name, number(result.king[i]), number(result.jack[i]), number(result.queen_models[i]),
               number(float(result.queen[i].mean()))]
        table.add_row(*row, *([number(result.pearson[i]), number(result.kendall[i])] if human else []))
    best = int(result.king.argmax())
    ranking = Table(title="QUEEN per system", title_justify="left")
    for column in ("system", "QUEEN") + (("human",) if human else ()):
        ranking.add_column(column, justify="left" if column == "system" else "right")
    for j in sorted(range(len(result.systems)), key=lambda j: -result.queen[best, j]):
        ranking.add_row(result.systems[j], number(result.queen[best, j]),
                        *([number(result.human_scores[j])] if human else []))
    notes = [f"QUEEN per system under {result.metric_sets[best]} (the set with the highest KING)",
             "QUEEN: P(peer at least as similar to a model as two other models are), over ordered triples of "
             "distinct models; KING: P(a left-out model's QUEEN > every peer's); JACK: P(two peers closer to a "
             "model than to each other); docs/qarla.md"]
    if human:
        notes.append(f"Pearson / Kendall tau-b: system QUEEN against the mean of {result.human} over the inputs")
    return [table, ranking] + footer(result, notes)
