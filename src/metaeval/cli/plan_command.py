"""`metaeval plan`: how many inputs (and systems) to judge for a target interval width or power."""
from __future__ import annotations

import click

from .. import defaults
from ..analyses.planning import TESTS, plan_annotation
from ..errors import ParameterError
from ..vocabulary import (
    ALTERNATIVES,
    COEFFICIENT_CHOICES,
    LEVEL_CHOICES,
    RESAMPLING_METHODS,
)
from .analysis_output import NumberList, footer, frame_table, output_options, render
from .common import load_source, seed_option, source_options, tie_tolerance_option


@click.command()
@source_options
@click.option("--n-inputs", type=NumberList(int), default=None,
              help="Judged inputs to simulate, e.g. 25,50,100,200 (default 0.25-4 x the pilot's).")
@click.option("--n-systems", type=NumberList(int), default=None, help="Systems to simulate (default all).")
@click.option("--level", type=click.Choice(LEVEL_CHOICES), default=defaults.LEVEL, show_default=True,
              help='Level of the simulated correlations.')
@click.option("--coefficient", type=click.Choice(COEFFICIENT_CHOICES), default=defaults.COEFFICIENT,
              show_default=True,
              help='Coefficient of the simulated correlations.')
@click.option("--method", type=click.Choice(RESAMPLING_METHODS), default=defaults.RESAMPLING_METHOD,
              show_default=True, help="BOOT-* interval and PERM-* / BOOT-* test.")
@click.option("--test", type=click.Choice(TESTS), default=defaults.PLAN_TEST, show_default=True,
              help='Test whose power is simulated.')
@click.option("--alternative", type=click.Choice(ALTERNATIVES), default=defaults.ALTERNATIVE, show_default=True,
              help='Alternative hypothesis of the test.')
@click.option("--alpha", type=float, default=defaults.ALPHA, show_default=True,
              help='Significance level of the power simulation.')
@click.option("--target-width", type=float, default=None, help="Answer: inputs needed for a mean width <= this.")
@click.option("--target-power", type=float, default=defaults.PLAN_TARGET_POWER, show_default=True,
              help='Answer: inputs needed for at least this power.')
@click.option("--n-repetitions", type=int, default=defaults.PLAN_REPETITIONS, show_default=True,
              help="Simulated annotation campaigns per grid cell.")
@click.option("--n-resamples", type=int, default=defaults.PLAN_N_RESAMPLES, show_default=True,
              help="Bootstrap resamples / permutations within each campaign.")
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
              help='Confidence level of the simulated intervals.')
@seed_option
@tie_tolerance_option
@output_options
def plan(dataset, dataset_options, scores, human, metrics, n_inputs, n_systems, level, coefficient, method, test,
         alternative, alpha, target_width, target_power, n_repetitions, n_resamples, confidence_level, seed, fmt,
         output):
    """Simulate interval width and power against the number of judged inputs and systems, from a pilot.

    The first --metric is the metric whose correlation interval is planned; a second --metric adds the
    power of the test that the first correlates better than the second.
    """
    ds, human = load_source(dataset, dataset_options, scores, human)
    if not 1 <= len(metrics) <= 2:
        raise ParameterError(f"`--metric` must be given once or twice (metric, optional second metric); got "
                             f"{len(metrics)} times.")
    result = plan_annotation(
        ds, metrics[0], human, metric_b=metrics[1] if len(metrics) == 2 else None, n_inputs=n_inputs,
        n_systems=n_systems, level=level, coefficient=coefficient, method=method, test=test,
        alternative=alternative, alpha=alpha, n_repetitions=n_repetitions, n_resamples=n_resamples,
        confidence_level=confidence_level, target_width=target_width, target_power=target_power, rng=seed,
    )
    render(result, fmt, result.to_frame(), _tables, output)


def _tables(result):
    columns = ["n_systems", "n_inputs", "extrapolated", "width_mean", "width_sd"]
    if result.metric_b:
        columns += ["power", "power_se"]
    title = (f"Simulated campaigns from the pilot ({result.pilot_shape[0]} x {result.pilot_shape[1]}): "
             f"width of the {result.confidence_level:.0%} BOOT-{result.method.upper()} interval of the "
             f"{result.level}-level {result.coefficient} of {result.metric}")
    if result.metric_b:
        title += f"; power of {result.test} test {result.metric} > {result.metric_b} at alpha {result.alpha:g}"
    parts = [frame_table(result.to_frame(), title=title, columns=columns)]
    answers = result.answer_frame()
    answer_columns = ["n_systems", "width_floor"]
    if result.target_width is not None:
        answer_columns += ["target_width", "required_inputs", "required_inputs_fit"]
    if result.metric_b:
        answer_columns += ["target_power", "required_inputs_power"]
    if result.target_width is not None:  # a fitted answer beyond the grid is marked where it is printed
        answers["required_inputs_fit"] = [
            f"{fit:,.0f} (beyond the grid)" if beyond else fit
            for fit, beyond in zip(answers["required_inputs_fit"], answers["fit_beyond_grid"])]
    parts.append(frame_table(answers, title="How many judged inputs?", columns=answer_columns))
    notes = ["width_floor, required_inputs_fit: from width(m) = floor + c / sqrt(m) fitted to the simulated means "
             "(inf: more inputs alone cannot reach the target; judge more systems)",
             "extrapolated: more inputs than the pilot, drawn with replacement from the pilot's",
             f"(beyond the grid): more inputs than the largest simulated ({max(result.n_inputs):,}): the fitted curve"
             " extrapolated, not simulated"]
    return parts + footer(result, notes)
