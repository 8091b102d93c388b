"""`metaeval qarla`: QARLA's QUEEN, KING and JACK of similarity-metric sets (Amigo et al. 2005)."""
from __future__ import annotations

import click
from rich.table import Table

from ..analyses.qarla import qarla as run_qarla
from ..analyses.qarla import qarla_similarities, read_qarla_texts
from ..analyses.qarla_similarity import DEFAULT_SIMILARITIES
from ..errors import ParameterError
from ..report.qarla_figure import check_figure_path, save_qarla_figure
from .analysis_output import footer, number, output_options, render
from .common import load_source
from .progress import progress_bar, progress_option


@click.command()
@click.option("--texts", required=True, type=click.Path(dir_okay=False),
              help="JSON Lines, one line per (system, input): doc_id, system_id, summary, references (the "
                   "models), optionally source; e.g. ../shared/data/summeval/texts.jsonl.")
@click.option("--similarity", "similarities", multiple=True,
              help=f"A similarity metric (repeatable; default: {', '.join(DEFAULT_SIMILARITIES)}): rouge-<m> or "
                   "rpre-<m> (inverted ROUGE) with <m> in 1, 2, 3, 4, l, w-1.2, s4, su4 and an optional type .a "
                   "(none), .b (stopwords removed), .c (and stemmed); tvm-<n>.")
@click.option("--set", "metric_sets", multiple=True,
              help="A metric set, its similarities joined by '+' (repeatable; default: each similarity alone, "
                   "then all together).")
@click.option("--inputs", type=int, default=None,
              help="Use the first N inputs of the file (default: all).")
@click.option("--dataset", help="A packaged dataset with human scores of the systems (e.g. summeval).")
@click.option("--dataset-option", "dataset_options", multiple=True, metavar="KEY=VALUE",
              help="Option of the packaged dataset.")
@click.option("--scores", multiple=True, type=click.Path(dir_okay=False),
              help="A score file with human scores of the systems (repeatable).")
@click.option("--human", help="The human scorer QUEEN is correlated with (default: the dataset's).")
@click.option("--plot", type=click.Path(dir_okay=False),
              help="Also draw KING / JACK per set and QUEEN against the human to this .png or .svg file.")
@progress_option
@output_options
def qarla(texts, similarities, metric_sets, inputs, dataset, dataset_options, scores, human, plot, fmt, output):
    """QARLA: QUEEN, KING and JACK of similarity-metric sets, without human judgments."""
    if plot:
        check_figure_path(plot)
    if human and not (dataset or scores):
        raise ParameterError(f"`--human` needs `--dataset` or `--scores` (the human scores); got --human {human!r} "
                             "alone.")
    candidates, references, sources = read_qarla_texts(texts)
    ds = None
    if dataset or scores:
        ds, human = load_source(dataset, dataset_options, scores, human)
    total = len(references) if inputs is None else min(inputs, len(references))
    with progress_bar() as bar:
        sims = qarla_similarities(candidates, references, similarities=similarities or DEFAULT_SIMILARITIES,
                                  inputs=inputs, sources=sources, progress=bar.task("similarities (inputs)", total))
    result = run_qarla(sims, metric_sets=metric_sets or None, ds=ds, human=human if ds is not None else None)
    if plot:
        save_qarla_figure(result, plot)
    render(result, fmt, result.to_frame(), _tables, output)


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
