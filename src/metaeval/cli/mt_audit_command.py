"""`metaeval mt audit`: sentinel metrics across a grid of tasks and the measures judged (docs/mt.md,
"Auditing the protocol"); a command of the `metaeval mt` group (:mod:`.mt_group`)."""
from __future__ import annotations

from pathlib import Path

import click

from .. import defaults
from ..errors import ParameterError
from .common import (declare, emit, option, output_options, output_width, reading_options, resamples_option, say,
                     seed_option, tie_tolerance_option)
from .mt_command import FLAGS, _golds, _language_pairs, _origin, _per_language_pair
from .progress import progress_bar, progress_option
from .source import located_by


@click.command(name="audit")
@option("scores", metavar="LP=PATH", help="A score file of one language pair (repeatable), as for `metaeval mt`.")
@option("dataset", multiple=True, metavar="LP=NAME",
        help="A packaged dataset as (part of) a language pair (repeatable), e.g. en-de=wmt20-mqm-ende.")
@option("dataset_option", help="An option of the packaged datasets (repeatable).")
@option("human", multiple=True, metavar="[LP=]NAME",
        help="The human scorer (the gold), or LP=NAME for one language pair (repeatable).")
@option("metric", help="A real metric (repeatable, at least 2; default: every non-human scorer).")
@option("task", multiple=True, metavar="LEVEL/STATISTIC",
        help="A task of the grid (repeatable; default: " + ", ".join(defaults.MT_AUDIT_TASKS) + ").")
@declare("base", dict(help="The metric the system-mean and rounded sentinels copy (default: the first metric)."))
@declare("levels", dict(type=int, default=defaults.MT_SENTINEL_LEVELS, show_default=True,
                        help="Distinct values of the rounded sentinel."))
@option("candidates", multiple=True, metavar="LP=PATH",
        help="The system outputs of one language pair (JSON Lines, as for `metaeval score`; repeatable): adds the"
             " length sentinel.")
@option("exclude_system", metavar="[LP=]SYSTEM", help="Leave this system out (repeatable), as for `metaeval mt`.")
@declare("consistency", dict(type=int, default=defaults.MT_CONSISTENCY_RESAMPLES, show_default=True,
                             help="Subsamples (half of the segments) of the ranking consistency; 0 skips it."))
@option("alpha", help="Significance level of the tests and the discriminative power; intervals at 1 - alpha.")
@option("plot", help="Also draw the audit to this .png or .svg file.")
@declare("accuracy_target", dict(type=float, multiple=True, metavar="LEVEL",
                                 help="An agreement level of the delta-to-accuracy curve (repeatable; default: "
                                      + ", ".join(f"{t:g}" for t in defaults.DELTA_ACCURACY_TARGETS) + ")."))
@option("method", default=defaults.DELTA_ACCURACY_METHOD,
        help="What the bootstrap of the delta-to-accuracy band resamples in each language pair.")
@declare("delta_plot", dict(type=click.Path(dir_okay=False),
                            help="Also draw the delta-to-accuracy curves to this .png or .svg file."))
@option("html", help="Also write an HTML page: the audit's tables and figures, the delta-to-accuracy curves.")
@option("protocol",
        help="The protocol audited (wmt23, wmt24, wmt25, mean or a TOML file, as for `metaeval mt`):"
                               " its tasks unless --task is given, its test and gold (default: the grid of --task"
                               " under the plain mean protocol).")
@option("human_baseline")
@option("rater_waves")
@reading_options()
@resamples_option
@seed_option
@tie_tolerance_option
@progress_option
@output_options
@located_by(lambda params: _origin({**params, "mt_metrics_eval": None}))
def audit(scores, dataset, dataset_option, human, metric, task, base, levels, candidates, exclude_system, consistency,
          alpha, plot, accuracy_target, method, delta_plot, html, protocol, human_baseline, rater_waves, reading,
          n_resamples, seed, tie_tolerance, format, output):
    """Sentinel metrics across a grid of tasks; each task's discriminative power and ranking consistency."""
    from ..mt.audit import mt_audit
    from ..mt.protocol import load_protocol
    from ..report.qarla_figure import check_figure_path
    from ..report.render import frame_table, render_text, signature_footer
    from ..stats.mt.protocol import PROTOCOLS

    datasets, dataset_options, humans, metrics, tasks = dataset, dataset_option, human, metric, task
    candidate_files, exclude_systems, n_consistency, fmt = candidates, exclude_system, consistency, format
    for param, path in (("plot", plot), ("delta_plot", delta_plot)):
        if path:
            check_figure_path(path, param=param)
    if not (scores or datasets):
        raise ParameterError("`--scores` or `--dataset` must be given; got neither.")
    human, golds = _golds(humans)
    audited = None if protocol is None else load_protocol(protocol)
    waves_first = rater_waves is not None  # the gold may be a wave: read the files' own human first
    data, found = _language_pairs(scores, None if waves_first else human, reading, n_resamples, datasets=datasets,
                                  dataset_options=dataset_options, golds={} if waves_first else golds,
                                  protocol=None if waves_first else audited or PROTOCOLS["mean"])
    human = human if waves_first else found
    candidates = None
    if candidate_files:
        from ..scoring.inputs import read_candidates

        files = _per_language_pair("--candidates", candidate_files)
        unknown = [lp for lp in files if lp not in data]
        if unknown:
            raise ParameterError(f"`--candidates` must name language pairs of the data ({', '.join(map(repr, data))});"
                                 f" got {unknown[0]!r}.")
        candidates = {lp: {(r.system, r.input): r.candidate if isinstance(r.candidate, str) else " ".join(r.candidate)
                           for r in read_candidates(path)} for lp, path in files.items()}
    gold = {**({lp: human for lp in data} if human else {}), **golds} if golds else human
    with progress_bar():
        result = mt_audit(data, list(metrics) or None, gold, tasks=list(tasks) or None, base=base, levels=levels,
                          candidates=candidates, exclude_systems=exclude_systems, n_resamples=n_resamples,
                          n_consistency=n_consistency, alpha=alpha, rng=seed,
                          accuracy_targets=tuple(accuracy_target) or defaults.DELTA_ACCURACY_TARGETS,
                          delta_method=method, protocol=audited, human_baselines=human_baseline,
                          rater_waves=rater_waves, tie_tolerance=tie_tolerance, params=FLAGS)
    if plot:
        from ..report.mt_audit_figure import save_mt_audit_figure

        save_mt_audit_figure(result, plot)
    if delta_plot:
        from ..report.mt_delta_figure import save_delta_accuracy_figure

        save_delta_accuracy_figure(result.delta_accuracy, delta_plot)
    if html:
        from ..report.mt_audit_section import write_mt_audit_page

        from ..runtime.output_sets import when_written

        page = Path(html).resolve()
        beside = tuple(Path(p).name for p in (output, plot, delta_plot)
                       if p and Path(p).resolve().parent == page.parent)
        written = write_mt_audit_page(html, result, command='metaeval mt audit', beside=beside)
        when_written(lambda: say(f"wrote {written}", err=True))  # once the command's output set is written

    def terminal(res):
        import pandas as pd

        def interval(m, key, low, high):
            return "n/a" if m[key] != m[key] else f"{m[key]:.3f} [{m[low]:.3f}, {m[high]:.3f}]"

        measures = pd.DataFrame([{"task": m["task"],
                                  "discriminative power": interval(m, "discriminative_power", "dp_low", "dp_high"),
                                  "pairs": m["pairs"],
                                  "ranking consistency": interval(m, "consistency", "cons_low", "cons_high")}
                                 for m in res.measures])
        # the columns without their common prefix "sentinel-": four sentinels and the task fit 100 columns
        # (the length sentinel's header was cut to "sentin...")
        sentinels = res.sentinel_frame().rename(columns=lambda c: c.removeprefix("sentinel-"))
        return [frame_table(sentinels, title=f"sentinel position among the {len(res.metrics)} metrics"
                            f" (1 = above all; * = significantly above one, p < {res.alpha:g}); columns: the"
                            " sentinels"),
                frame_table(measures, title="the measures: discriminative power and ranking consistency"),
                frame_table(res.delta_accuracy.table_frame(),
                            title=f"delta-to-accuracy: metric delta for X% agreement with the humans"
                                  f" ({int(res.delta_accuracy.pairs.max(initial=0))} system pairs,"
                                  f" {1 - res.alpha:.0%} band)"),
                *signature_footer(res, res.notes)]

    emit(render_text(result, fmt, terminal=terminal, width=output_width(output)), output)
