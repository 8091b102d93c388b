"""`metaeval systems`: compare systems under one scorer (paired bootstrap or approximate randomization)."""
from __future__ import annotations

import io
import math

import click
from rich.console import Console
from rich.table import Table

from .. import defaults
from ..vocabulary import (ALTERNATIVES, CORRECTIONS, SYSTEM_TESTS)
from ..analyses.systems import compare_systems
from ..report import formats
from .common import emit, load_source, output_options, resamples_option, seed_option, source_options



def frame_table(frame, title: str, digits: int = 3) -> Table:
    """A rich table of a pandas DataFrame (floats rounded, NaN as n/a)."""
    from pandas.api.types import is_numeric_dtype

    table = Table(title=title, title_justify="left")
    for column in frame.columns:
        numeric = is_numeric_dtype(frame[column]) and frame[column].dtype != bool
        table.add_column(str(column), justify="right" if numeric else "left")
    for row in frame.itertuples(index=False):
        cells = []
        for value in row:
            if isinstance(value, float):
                cells.append("n/a" if math.isnan(value) else f"{value:.{digits}f}")
            else:
                cells.append(str(value))
        table.add_row(*cells)
    return table


def render(result, fmt: str, frame, title: str, footer: str = "") -> str:
    """Text of ``result`` in ``fmt``: a terminal table, JSON (``to_dict``) or CSV (``frame``)."""
    if fmt == "json":
        return formats.to_json(result)
    if fmt == "csv":
        return formats.to_csv(frame)
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, force_terminal=False)
    console.print(frame_table(frame, title))
    if footer:
        console.print(footer)
    console.print(f"signature: {result.signature}")
    return buffer.getvalue()


@click.command()
@source_options
@click.option("--scorer", help="The scorer whose per-item scores are compared (default: the human score).")
@click.option("--test", type=click.Choice(SYSTEM_TESTS), default=defaults.SYSTEM_TEST, show_default=True)
@click.option("--alternative", type=click.Choice(ALTERNATIVES), default=defaults.SYSTEM_ALTERNATIVE,
              show_default=True, help="'greater': the first system of a pair scores higher.")
@click.option("--correction", type=click.Choice(CORRECTIONS), default=defaults.CORRECTION, show_default=True)
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True)
@click.option("--exact", is_flag=True, help="Randomization: enumerate all 2^M assignments (M <= 20).")
@resamples_option
@seed_option
@output_options
def systems(dataset, dataset_options, scores, human, metrics, scorer, test, alternative, correction,
            confidence_level, exact, n_resamples, seed, fmt, output):
    """Compare every pair of systems under one scorer (Koehn 2004; Riezler & Maxwell 2005)."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    result = compare_systems(ds, scorer or human, test=test, alternative=alternative, correction=correction,
                             confidence_level=confidence_level, exact=exact, n_resamples=n_resamples, rng=seed)
    frame = result.to_frame()
    title = (f"{result.scorer}: {test} test, {alternative}, {correction} over {len(result.pairs)} pairs, "
             f"significant at {1 - confidence_level:g}")
    footer = f"{int(result.significant.sum())} of {len(result.pairs)} pairs differ significantly"
    emit(render(result, fmt, frame, title, footer), output)
