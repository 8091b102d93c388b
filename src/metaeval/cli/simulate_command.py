"""`metaeval simulate coverage|power`: the simulations of Deutsch, Dror & Roth (2021), Sec. 5."""
from __future__ import annotations

import click

from .. import defaults
from ..analyses.power import POWER_TESTS, TEXT_FILES, load_texts, simulate_power
from ..analyses.simulations import COVERAGE_METHODS, simulate_coverage
from ..errors import ParameterError
from ..metrics.degraded import ROUGE_VARIANTS, TOKENIZERS
from ..runtime.tasks import chunk_sizes
from ..vocabulary import COEFFICIENT_CHOICES
from .common import (
    emit,
    load_source,
    output_options,
    resamples_option,
    seed_option,
    source_options,
    tie_tolerance_option,
)
from .progress import progress_bar, progress_option
from .systems_command import render

LEVELS = defaults.SIMULATION_LEVELS


def _trials_option(command):
    return click.option("--n-trials", type=int, default=defaults.SIMULATION_TRIALS, show_default=True,
                        help="Simulation trials.")(command)


def _levels_option(command):
    return click.option("--level", "levels", multiple=True, type=click.Choice(LEVELS),
                        help=f"Level (repeatable; default: {', '.join(defaults.SIMULATION_LEVELS)}).")(command)


def _backend_options(command):
    command = click.option("--scheduler", default=None,
                           help="Address of a running Dask scheduler, e.g. tcp://host:8786 (needs metaeval[dask]); "
                                "same results as a serial run for the same seed.")(command)
    return click.option("--workers", type=int, default=1, show_default=True,
                        help="Local worker processes (same results for the same seed).")(command)


@click.group()
def simulate() -> None:
    """Coverage of confidence intervals and power of tests, simulated on real data."""


@simulate.command()
@source_options
@_levels_option
@click.option("--coefficient", "coefficients", multiple=True, type=click.Choice(COEFFICIENT_CHOICES),
              help=f"Coefficient (repeatable; default: {defaults.COEFFICIENT}).")
@click.option("--method", "methods", multiple=True, type=click.Choice(COVERAGE_METHODS),
              help="Interval (repeatable; default: all four).")
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
              help='Nominal coverage of the simulated intervals.')
@_trials_option
@resamples_option
@seed_option
@tie_tolerance_option
@_backend_options
@progress_option
@output_options
def coverage(dataset, dataset_options, scores, human, metrics, levels, coefficients, methods, confidence_level,
             n_trials, n_resamples, seed, workers, scheduler, fmt, output):
    """How often an interval built on one quarter contains the held-out quarter's correlation (Table 1)."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    if len(metrics) != 1:
        raise ParameterError(f"`--metric` must be given exactly once; got {len(metrics)} metrics.")
    chunks = len(chunk_sizes(n_trials, defaults.SIMULATION_CHUNK_TRIALS))
    with progress_bar() as bar:
        result = simulate_coverage(ds, metrics[0], human, levels=levels or defaults.SIMULATION_LEVELS,
                                   coefficients=coefficients or (defaults.COEFFICIENT,),
                                   methods=methods or defaults.COVERAGE_METHODS, confidence_level=confidence_level,
                                   n_trials=n_trials, n_resamples=n_resamples, rng=seed, workers=workers,
                                   scheduler=scheduler, progress=bar.task(
                                       f"trials (chunks of {defaults.SIMULATION_CHUNK_TRIALS})", total=chunks))
    title = (f"coverage of {confidence_level:.0%} intervals for r({metrics[0]}, {human}) on held-out quarters, "
             f"{n_trials} trials")
    emit(render(result, fmt, result.to_frame(), title), output)


@simulate.command()
@source_options
@click.option("--texts-dir", required=True, type=click.Path(file_okay=False, exists=True),
              help="Directory holding summeval/texts.jsonl or realsumm/realsumm_scores.jsonl (texts are not packaged).")
@click.option("--proportion", "proportions", multiple=True, type=float,
              help="Share of tokens kept (repeatable; default: 0.05, 0.1, 0.2, ..., 1).")
@click.option("--test", "tests", multiple=True, type=click.Choice(POWER_TESTS),
              help="Test (repeatable; default: all three).")
@_levels_option
@click.option("--coefficient", type=click.Choice(COEFFICIENT_CHOICES), default=defaults.POWER_COEFFICIENT,
              show_default=True,
              help='Coefficient of the simulated tests.')
@click.option("--alpha", type=float, default=defaults.ALPHA, show_default=True,
              help='Significance level of the simulated tests.')
@click.option("--tokenizer", type=click.Choice(TOKENIZERS), default="rouge155", show_default=True,
              help='Tokenizer of the ROUGE scores recomputed on the degraded texts.')
@click.option("--rouge-variant", type=click.Choice(ROUGE_VARIANTS), default=None,
              help="ROUGE-1 variant of X and the degraded metric (default: the paper's per dataset: f1 on summeval, "
                   "recall on realsumm).")
@click.option("--x-metric", default=None,
              help="Use this scorer of the dataset as X (the paper: the packaged ROUGE-1 column, e.g. rouge-1.f1); "
                   "default: ROUGE-1 recomputed from the texts.")
@_trials_option
@resamples_option
@seed_option
@tie_tolerance_option
@_backend_options
@progress_option
@output_options
def power(dataset, dataset_options, scores, human, metrics, texts_dir, proportions, tests, levels, coefficient,
          alpha, tokenizer, rouge_variant, x_metric, n_trials, n_resamples, seed, workers, scheduler, fmt, output):
    """Power of PERM-BOTH, BOOT-BOTH and Williams against ROUGE-1 on p% of tokens (Figure 3)."""
    if dataset not in TEXT_FILES:
        raise ParameterError(f"`--dataset` must be one of {', '.join(repr(k) for k in TEXT_FILES)} (their texts "
                             f"are in --texts-dir); got {dataset!r}.")
    ds, human = load_source(dataset, dataset_options, scores, human)
    candidates, references = load_texts(dataset, directory=texts_dir)
    proportions = proportions or defaults.POWER_PROPORTIONS
    chunks = len(proportions) * len(chunk_sizes(n_trials, defaults.SIMULATION_CHUNK_TRIALS))
    with progress_bar() as bar:
        result = simulate_power(ds, human, candidates=candidates, references=references,
                                proportions=proportions, tests=tests or defaults.POWER_TESTS,
                                levels=levels or defaults.SIMULATION_LEVELS, coefficient=coefficient, alpha=alpha,
                                tokenizer=tokenizer, rouge_variant=rouge_variant, x_metric=x_metric,
                                n_trials=n_trials, n_resamples=n_resamples, rng=seed,
                                workers=workers, scheduler=scheduler, progress=bar.task(
                                    f"trials (chunks of {defaults.SIMULATION_CHUNK_TRIALS}) x proportions",
                                    total=chunks))
    x = f", X = {result.x_metric}" if result.x_metric else ""
    title = (f"power against ROUGE-1 {result.rouge_variant} on p% of tokens ({result.coefficient}, alpha {alpha:g}, "
             f"{n_trials} trials{x})")
    frame = result.to_frame()
    if fmt == "table":
        frame = frame.pivot_table(index=["level", "test"], columns="proportion", values="power",
                                  sort=False).reset_index()
        frame.columns = [c if isinstance(c, str) else f"p={c:g}" for c in frame.columns]
    emit(render(result, fmt, frame, title), output)
