"""`metaeval systems`: compare systems under one scorer (paired bootstrap or approximate randomization)."""
from __future__ import annotations

import click
from rich.text import Text

from .. import defaults
from ..analyses.systems import compare_systems
from ..report.render import frame_table, render_text, signature_footer
from ..vocabulary import ALTERNATIVES, CORRECTIONS, SYSTEM_TESTS
from ..errors import ParameterError
from .common import (
    corpus_options,
    corpus_statistics_for,
    emit,
    output_width,
    load_source,
    output_options,
    resamples_option,
    seed_option,
    source_options,
)


def render(result, fmt: str, frame, title: str, footer: str = "", width: int | None = None) -> str:
    """Text of ``result`` in ``fmt``; the terminal table is ``frame`` with ``footer`` and the signature."""
    def table(result):
        return [frame_table(frame, title=title), *([Text(footer)] if footer else []), *signature_footer(result)]

    return render_text(result, fmt, terminal=table, frame=frame, width=output_width() if width is None else width)


@click.command()
@source_options
@click.option("--scorer", help="The scorer whose per-item scores are compared (default: the human score).")
@click.option("--test", type=click.Choice(SYSTEM_TESTS), default=defaults.SYSTEM_TEST, show_default=True,
              help='Test of each pair of systems.')
@click.option("--alternative", type=click.Choice(ALTERNATIVES), default=defaults.SYSTEM_ALTERNATIVE,
              show_default=True, help="'greater': the first system of a pair scores higher.")
@click.option("--correction", type=click.Choice(CORRECTIONS), default=defaults.CORRECTION, show_default=True,
              help='Multiple-comparison correction over the pairs.')
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
              help='Confidence level of the intervals (significance at 1 - this).')
@click.option("--exact", is_flag=True, help="Randomization: enumerate all 2^M assignments (M <= 20).")
@corpus_options
@resamples_option
@seed_option
@output_options
def systems(dataset, dataset_options, scores, human, metrics, scorer, test, alternative, correction,
            confidence_level, exact, corpus_texts, n_resamples, seed, fmt, output):
    """Compare every pair of systems under one scorer (Koehn 2004; Riezler & Maxwell 2005)."""
    ds, human = load_source(dataset, dataset_options, scores, human, human_optional=scorer is not None)
    corpus = corpus_statistics_for(ds, *corpus_texts)
    if len(corpus) > 1 or corpus and scorer is not None and scorer not in corpus:
        raise ParameterError(f"`--corpus-metric` must name the one scorer compared (--scorer); got "
                             f"{', '.join(map(repr, corpus))} for scorer {scorer!r}.")
    source = next(iter(corpus.values())) if corpus else ds  # CorpusScores: corpus scores of resampled sums
    result = compare_systems(source, None if corpus else scorer or human, test=test, alternative=alternative,
                             correction=correction,
                             confidence_level=confidence_level, exact=exact, n_resamples=n_resamples, rng=seed)
    frame = result.to_frame()
    title = (f"{result.scorer}: {test} test, {alternative}, {correction} over {len(result.pairs)} pairs, "
             f"significant at {1 - confidence_level:g}")
    footer = f"{int(result.significant.sum())} of {len(result.pairs)} pairs differ significantly"
    emit(render(result, fmt, frame, title, footer, output_width(output)), output)
