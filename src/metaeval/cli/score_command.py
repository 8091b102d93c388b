"""`metaeval score`: metrics over candidates and references, into a score file (see docs/scoring.md)."""
from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from contextlib import nullcontext
from pathlib import Path

import click

from .. import defaults
from ..data.formats import file_format
from ..data.sidecar import SIDECAR_SUFFIX, sidecar_path
from ..data.writers import encode_scores
from ..errors import InputFileError, ParameterError
from ..report.render import SignatureLines
from ..runtime.file_sets import write_file_set
from ..runtime.output_sets import commit_pending
from .common import declare, option, output_width, say


def _option_value(text: str):
    """A --metric-option value: JSON (true, 4, 1.2, "x", [..]) or else the text itself (strict JSON)."""
    from ..metrics.registry import option_value

    return option_value(text)


def parse_metric_options(metrics: tuple[str, ...], pairs: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """``('rouge.stem=true', 'rouge.n=4')`` -> ``{'rouge': {'stem': True, 'n': 4}}``."""
    options: dict[str, dict[str, object]] = {m: {} for m in metrics}
    for pair in pairs:
        target, sep, value = pair.partition("=")
        metric, dot, key = target.partition(".")
        if not sep or not dot or not metric or not key:
            raise ParameterError(f"`--metric-option` must look like METRIC.KEY=VALUE; got {pair!r}.")
        if metric not in options:
            raise ParameterError(f"`--metric-option` must name a metric given with --metric; got {metric!r}.")
        options[metric][key.replace("-", "_")] = _option_value(value)
    return options


def with_mt_preprocessing(options: dict[str, dict[str, object]],
                          preset: str | None) -> dict[str, dict[str, object]]:
    """Give ``preprocessing=preset`` to every metric whose class takes it (BLEU, NIST, TER, WER, PER), unless set."""
    if preset is None:
        return options
    import inspect

    from ..errors import check_choice
    from ..metrics.mt_preprocessing import PRESETS
    from ..metrics.registry import METRICS

    check_choice("--mt-preprocessing", preset, PRESETS)
    takers = [name for name in options
              if name in METRICS and "preprocessing" in inspect.signature(METRICS[name]).parameters]
    if not takers:
        raise ParameterError("`--mt-preprocessing` must go with an MT metric (bleu, nist, ter, wer, per); "
                             f"got {preset!r} with {', '.join(options)}.")
    for name in takers:
        options[name].setdefault("preprocessing", preset)
    return options


def with_model_dir(options: dict[str, dict[str, object]], model_dir: str | None) -> dict[str, dict[str, object]]:
    """Give ``model_dir`` to every metric whose class takes it (the embedding metrics), unless set."""
    if model_dir is None:
        return options
    import inspect

    from ..metrics.registry import METRICS

    for name, chosen in options.items():
        if name in METRICS and "model_dir" in inspect.signature(METRICS[name]).parameters:
            chosen.setdefault("model_dir", model_dir)
    return options


@click.command()
@option("candidates", required=True, type=click.Path(dir_okay=False), metavar=None,
        help="JSON Lines: one {system, input, candidate} per line.")
@option("references", required=True, type=click.Path(dir_okay=False), metavar=None,
        help="JSON Lines: one {input, references: [...]} (or {input, reference}) per line.")
@option("metric", required=True,
        help="A metric of metaeval.metrics.METRICS (repeatable): rouge, bleu, chrf, ter, meteor, ...")
@option("metric_option")
@declare("mt_preprocessing", dict(metavar="PRESET",
                                  help="MT preprocessing preset for bleu, nist, ter, wer, per: none, mteval,"
                                       " leusch-baseline, leusch-best (docs/mt-preprocessing.md;"
                                       " METRIC.preprocessing=... overrides it)."))
@declare("model_dir", dict(type=click.Path(file_okay=False),
                           help="Local Hugging Face model directory for the embedding metrics (bertscore,"
                                " moverscore)."))
@option("output", required=True, help="Score file: .csv, .tsv, .jsonl or .parquet (written atomically), plus"
                                      f" <output>{SIDECAR_SUFFIX} with the metric signatures.")
@option("workers", default=defaults.SCORING_WORKERS, help="Local worker processes.")
@option("scheduler", help="Address of a running Dask scheduler, e.g. tcp://host:8786 (needs metaeval[dask]).")
@declare("cache", dict(type=click.Path(dir_okay=False),
                       help="SQLite score cache: finished batches are kept there; a re-run scores only what is"
                            " missing."))
@declare("batch_size", dict(type=int, default=None,
                            help="Pairs per batch (default: about 4 batches per worker, at most"
                                 f" {defaults.SCORING_BATCH_SIZE})."))
@option("progress", help="Progress bars on stderr (default: when stderr is a terminal).")
def score(candidates, references, metric, metric_option, mt_preprocessing, model_dir, output, workers, scheduler,
          cache, batch_size, progress):
    """Score system outputs against references with one or more metrics."""
    from ..metrics.registry import get_scorer
    from ..scoring import score as score_corpus

    file_format(output, None, writing=True)  # an unknown extension fails now, not after the scoring
    if not Path(output).resolve().parent.is_dir():
        raise InputFileError(output, "must be in an existing directory; got a directory that does not exist.")
    metrics = metric
    options = with_model_dir(parse_metric_options(metrics, metric_option), model_dir)
    options = with_mt_preprocessing(options, mt_preprocessing)
    scorers = {name: get_scorer(name, **options[name]) for name in dict.fromkeys(metrics)}
    from ..report.escape import console
    from ..runtime.progress import RichProgress

    drawn = sys.stderr.isatty() if progress is None else progress  # the CLI draws the library's reports
    with RichProgress(transient=False, console=console(stderr=True)) if drawn else nullcontext() as bar:
        ds = score_corpus(candidates, references, metrics=list(scorers.values()), workers=workers,
                          scheduler=scheduler, cache=cache, batch_size=batch_size, progress=bar or False)
    data = encode_scores(ds, output)
    metadata = ds.metadata()
    metadata["scores_file"] = {"name": Path(output).name, "sha256": hashlib.sha256(data).hexdigest()}
    side = sidecar_path(output)
    # the score file and its sidecar are one set: a failure writing either leaves the old pair
    write_file_set(Path(output).parent, {side.name: (json.dumps(metadata, indent=2) + "\n").encode("utf-8"),
                                         Path(output).name: data})
    commit_pending()  # written now: the summary below says so
    run = ds.run
    width = output_width()
    summary = (f"scored {run.cells} candidates ({run.pairs} distinct pairs) with {len(run.metrics)}"
               f" metric{'' if len(run.metrics) == 1 else 's'} on {run.backend}"
               f" in {run.seconds:.1f} s: {run.computed} computed, {run.cached} from the cache")
    for line in textwrap.wrap(summary, width, subsequent_indent="  "):
        say(line)
    for metric in run.metrics:
        for n, line in enumerate(SignatureLines(metric.signature, label=f"  {metric.label}: ").lines(width - 2)):
            say(line if n == 0 else "  " + line)
    say(f"wrote {output} ({len(ds.systems)} systems x {len(ds.inputs)} inputs, {len(ds.scorers)} scorers)"
               f" and {side}")
