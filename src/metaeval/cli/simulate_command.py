"""`metaeval simulate coverage|power`: the simulations of Deutsch, Dror & Roth (2021), Sec. 5."""
from __future__ import annotations

import click

from .. import defaults
from ..analyses.power import POWER_TESTS, TEXT_FILES, load_texts, simulate_power
from ..analyses.simulations import COVERAGE_METHODS, simulate_coverage
from ..errors import ParameterError
from ..metrics.degraded import ROUGE_VARIANTS, TOKENIZERS
from ..runtime.tasks import chunk_sizes
from .analysis_views import titled
from .common import (
    declare,
    emit,
    group,
    option,
    output_options,
    resamples_option,
    seed_option,
    source_options,
    tie_tolerance_option,
)
from .progress import progress_bar, progress_option
from .source import load_source

LEVELS = defaults.SIMULATION_LEVELS


def _trials_option(command):
    return declare("n_trials", dict(type=int, default=defaults.SIMULATION_TRIALS, show_default=True,
                                    help="Simulation trials."))(command)


def _levels_option(command):
    return option("level", multiple=True, type=click.Choice(LEVELS), default=None, show_default=False,
                  help=f"Level (repeatable; default: {', '.join(defaults.SIMULATION_LEVELS)}).")(command)


def _backend_options(command):
    return option("workers")(option("scheduler")(command))


@group()
def simulate() -> None:
    """Coverage of confidence intervals and power of tests, simulated on real data."""


@simulate.command()
@source_options
@_levels_option
@option("coefficient", multiple=True, default=None, show_default=False,
        help=f"Coefficient (repeatable; default: {defaults.COEFFICIENT}).")
@option("method", multiple=True, type=click.Choice(COVERAGE_METHODS), default=None, show_default=False,
        help="Interval (repeatable; default: all four).")
@option("confidence_level", help="Nominal coverage of the simulated intervals.")
@_trials_option
@resamples_option
@seed_option
@tie_tolerance_option
@_backend_options
@progress_option
@output_options
def coverage(source, level, coefficient, method, confidence_level, n_trials, n_resamples, seed, workers, scheduler,
             tie_tolerance, format, output):
    """How often an interval built on one quarter contains the held-out quarter's correlation (Table 1)."""
    ds, human = load_source(source, n_resamples=n_resamples)
    metrics = source.metric
    if len(metrics) != 1:
        raise ParameterError(f"`--metric` must be given exactly once; got {len(metrics)} metrics.")
    chunks = len(chunk_sizes(n_trials, defaults.SIMULATION_CHUNK_TRIALS))
    with progress_bar() as bar:
        result = simulate_coverage(ds, metrics[0], human, levels=level or defaults.SIMULATION_LEVELS,
                                   coefficients=coefficient or (defaults.COEFFICIENT,),
                                   methods=method or defaults.COVERAGE_METHODS, confidence_level=confidence_level,
                                   n_trials=n_trials, n_resamples=n_resamples, rng=seed, workers=workers,
                                   scheduler=scheduler, tie_tolerance=tie_tolerance, progress=bar.task(
                                       f"trials (chunks of {defaults.SIMULATION_CHUNK_TRIALS})", total=chunks))
    title = (f"coverage of {confidence_level:.0%} intervals for r({metrics[0]}, {human}) on held-out quarters, "
             f"{n_trials} trials")
    emit(titled(result, format, result.to_frame(), title), output)


@simulate.command()
@source_options
@declare("texts_dir", dict(required=True, type=click.Path(file_okay=False, exists=True),
                           help="Directory holding summeval/texts.jsonl or realsumm/realsumm_scores.jsonl (texts are"
                                " not packaged)."))
@declare("proportion", dict(multiple=True, type=float,
                            help="Share of tokens kept (repeatable; default: 0.05, 0.1, 0.2, ..., 1)."))
@option("test", multiple=True, type=click.Choice(POWER_TESTS), help="Test (repeatable; default: all three).")
@_levels_option
@option("coefficient", default=defaults.POWER_COEFFICIENT, help="Coefficient of the simulated tests.")
@option("alpha", help="Significance level of the simulated tests.")
@declare("tokenizer", dict(type=click.Choice(TOKENIZERS), default="rouge155", show_default=True,
                           help="Tokenizer of the ROUGE scores recomputed on the degraded texts."))
@declare("rouge_variant", dict(type=click.Choice(ROUGE_VARIANTS), default=None,
                               help="ROUGE-1 variant of X and the degraded metric (default: the paper's per dataset:"
                                    " f1 on summeval, recall on realsumm)."))
@declare("x_metric", dict(default=None, help="Use this scorer of the dataset as X (the paper: the packaged ROUGE-1"
                                             " column, e.g. rouge-1.f1); default: ROUGE-1 recomputed from the texts."))
@_trials_option
@resamples_option
@seed_option
@tie_tolerance_option
@_backend_options
@progress_option
@output_options
def power(source, texts_dir, proportion, test, level, coefficient, alpha, tokenizer, rouge_variant, x_metric,
          n_trials, n_resamples, seed, workers, scheduler, tie_tolerance, format, output):
    """Power of PERM-BOTH, BOOT-BOTH and Williams against ROUGE-1 on p% of tokens (Figure 3)."""
    if source.dataset not in TEXT_FILES:
        raise ParameterError(f"`--dataset` must be one of {', '.join(repr(k) for k in TEXT_FILES)} (their texts "
                             f"are in --texts-dir); got {source.dataset!r}.")
    ds, human = load_source(source, n_resamples=n_resamples)
    candidates, references = load_texts(source.dataset, directory=texts_dir)
    proportions = proportion or defaults.POWER_PROPORTIONS
    chunks = len(proportions) * len(chunk_sizes(n_trials, defaults.SIMULATION_CHUNK_TRIALS))
    with progress_bar() as bar:
        result = simulate_power(ds, human, candidates=candidates, references=references,
                                proportions=proportions, tests=test or defaults.POWER_TESTS,
                                levels=level or defaults.SIMULATION_LEVELS, coefficient=coefficient, alpha=alpha,
                                tokenizer=tokenizer, rouge_variant=rouge_variant, x_metric=x_metric,
                                n_trials=n_trials, n_resamples=n_resamples, rng=seed,
                                workers=workers, scheduler=scheduler, tie_tolerance=tie_tolerance, progress=bar.task(
                                    f"trials (chunks of {defaults.SIMULATION_CHUNK_TRIALS}) x proportions",
                                    total=chunks))
    x = f", X = {result.x_metric}" if result.x_metric else ""
    title = (f"power against ROUGE-1 {result.rouge_variant} on p% of tokens ({result.coefficient}, alpha {alpha:g}, "
             f"{n_trials} trials{x})")
    frame = result.to_frame()
    if format == "table":
        frame = frame.pivot_table(index=["level", "test"], columns="proportion", values="power",
                                  sort=False).reset_index()
        frame.columns = [c if isinstance(c, str) else f"p={c:g}" for c in frame.columns]
    emit(titled(result, format, frame, title), output)
