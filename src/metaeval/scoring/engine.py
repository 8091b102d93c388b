"""The scoring engine: metrics over a corpus of candidates and references, into a ScoreSet.

Every distinct (candidate, references) pair is scored once per metric; pairs already in the cache are
read, the others are cut into batches and scored by a backend (this process, local worker processes
or a Dask cluster); each finished batch is written to the cache in one transaction as soon as it
arrives. A run that stops for any reason (an error, Ctrl-C, SIGKILL, a lost cluster) therefore keeps
every finished batch, and running it again computes only what is missing.
"""
from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from .. import defaults
from ..errors import DataWarning, ParameterError, check_int
from ..runtime.dask import SchedulerLostError
from ..runtime.progress import RichProgress, as_progress
from .backends import Batch, make_backend
from .cache import Key, ScoreCache, text_digest
from .inputs import ScoringInputs, load_inputs
from .result import MetricRun, ScoredSet, ScoringRun

__all__ = ["score"]


def _resolve_metric(metric: Any) -> Any:
    from ..metrics.registry import get_scorer

    if isinstance(metric, str):
        return get_scorer(metric)
    if not callable(getattr(metric, "score", None)) or not hasattr(metric, "signature"):
        raise ParameterError(
            "`metrics` must hold metric names (see metaeval.metrics.METRICS) or scorers (objects with a"
            f" `signature` and a `score(candidate, references)` method); got {metric!r}."
        )
    return metric


def _check_metrics(metrics: Any) -> tuple[list[str], list[Any], bool]:
    """Labels, scorers, and whether the labels prefix the scorer names (mapping form)."""
    if isinstance(metrics, Mapping):
        items = [(str(label), _resolve_metric(m)) for label, m in metrics.items()]
        prefixed = True
    else:
        if isinstance(metrics, str) or not isinstance(metrics, Sequence):
            metrics = [metrics]
        scorers = [_resolve_metric(m) for m in metrics]
        items = [(str(getattr(s, "name", type(s).__name__.lower())), s) for s in scorers]
        prefixed = False
        seen: set[str] = set()
        for label, _ in items:
            if label in seen:
                raise ParameterError(
                    f"`metrics` must name each metric once; got {label!r} twice (to score with two settings of"
                    " one metric, pass a mapping {label: scorer})."
                )
            seen.add(label)
    if not items:
        raise ParameterError("`metrics` must name at least one metric; got none.")
    signatures = [str(s.signature) for _, s in items]
    for k, signature in enumerate(signatures):
        if signature in signatures[:k]:
            raise ParameterError(f"`metrics` must hold distinct metrics; got the signature {signature!r} twice.")
    return [label for label, _ in items], [s for _, s in items], prefixed


def _score_iv(metrics, workers, scheduler, cache, progress, batch_size):
    labels, scorers, prefixed = _check_metrics(metrics)
    workers = check_int("workers", workers, minimum=1)
    if scheduler is not None and workers != 1:
        raise ParameterError(f"`workers` must be 1 when `scheduler` is given (the cluster sets the parallelism); got {workers!r}.")
    if cache is not None and not isinstance(cache, (str, Path)) and not hasattr(cache, "__fspath__"):
        raise ParameterError(f"`cache` must be None or the path of a cache file; got {cache!r}.")
    if not isinstance(progress, bool) and not callable(progress):
        raise ParameterError(f"`progress` must be True, False or a progress callable; got {progress!r}.")
    if batch_size is not None:
        batch_size = check_int("batch_size", batch_size, minimum=1)
    return labels, scorers, prefixed, workers, cache, batch_size


def _pairs(inputs: ScoringInputs) -> tuple[list[Key], dict[Key, tuple[Any, Any]]]:
    """The key of every cell and the distinct pairs by key (first occurrence order)."""
    reference_digests = {item: text_digest(list(refs)) for item, refs in inputs.references.items()}
    cell_keys: list[Key] = []
    distinct: dict[Key, tuple[Any, Any]] = {}
    for cell, candidate in enumerate(inputs.candidates):
        item = inputs.inputs[inputs.cells[cell][1]]
        key = (text_digest(candidate), reference_digests[item])
        cell_keys.append(key)
        if key not in distinct:
            distinct[key] = (candidate, inputs.references[item])
    return cell_keys, distinct


def _with_reference_corpus(scorers: list[Any], inputs: ScoringInputs) -> list[Any]:
    """Scorers whose scores depend on the whole reference set (NIST's information weights) get it once.

    A scorer with a ``with_reference_corpus(references)`` method is replaced by the scorer it returns for
    the references of every input; its signature then records that reference set (the cache key).
    """
    if not any(callable(getattr(s, "with_reference_corpus", None)) for s in scorers):
        return scorers
    refs = [inputs.references[item] for item in inputs.inputs]
    return [s.with_reference_corpus(refs) if callable(getattr(s, "with_reference_corpus", None)) else s
            for s in scorers]


def _auto_batch_size(missing: int, parallelism: int) -> int:
    """Pairs per batch: about 4 batches per worker, at most :data:`defaults.SCORING_BATCH_SIZE`."""
    if missing == 0:
        return defaults.SCORING_BATCH_SIZE
    return max(1, min(defaults.SCORING_BATCH_SIZE, math.ceil(missing / (4 * parallelism))))


def _progress(progress: Any):
    """The protocol callable of ``progress`` (True: the runtime's drawer, on stderr, kept when done)."""
    if progress is True:
        return RichProgress(transient=False)
    return nullcontext(as_progress(progress))


def score(
    candidates: Any,
    references: Any,
    *,
    metrics: Any,
    workers: int = defaults.SCORING_WORKERS,
    scheduler: Any = None,
    cache: str | Path | None = None,
    progress: bool = True,
    batch_size: int | None = None,
    name: str | None = None,
) -> ScoredSet:
    """Score every candidate against its references with every metric.

    Parameters
    ----------
    candidates : path, list of dict, pandas.DataFrame or mapping
        System outputs: a JSON Lines file with ``system``, ``input`` and ``candidate`` per line (see
        :mod:`metaeval.scoring.inputs`), records of those fields, or ``{system: {input: candidate}}``.
        A candidate is a text (one sentence per line) or a list of sentences.
    references : path, list of dict, pandas.DataFrame or mapping
        ``input`` with ``references`` (a list) or ``reference`` (one) per line, or ``{input: [reference,
        ...]}``.
    metrics : str, scorer, list of those, or mapping of label to those
        Registry names (``'rouge'``, ``'bleu'``, ... see :data:`metaeval.metrics.METRICS`, built with
        default options) or scorer objects (``metaeval.metrics.get_scorer('rouge', stem=True)``). With a
        mapping, every score name is prefixed by its label (``{'stemmed': Rouge(stem=True)}`` gives
        ``stemmed.rouge-1.recall``, ...), which lets one metric run with several settings.
    workers : int, default 1
        Local worker processes; 1 scores in this process.
    scheduler : str or dask.distributed.Client, optional
        Score on a Dask cluster instead: a Client, or the address of a running scheduler
        (``'tcp://host:8786'``). Needs the ``dask`` extra; ``workers`` must then be 1.
    cache : path, optional
        An SQLite score cache (created if absent). Finished batches are stored as they arrive; pairs
        found there are not scored again (a re-run, a resumed run, or another corpus sharing pairs).
    progress : bool or callable, default True
        True: a progress bar per metric on stderr; a callable receives the reports instead
        (:mod:`metaeval.runtime.progress`: one step per metric, named by its label, one unit per pair).
    batch_size : int, optional
        Pairs per batch (the unit of work and of cache commits). Default: about 4 batches per worker,
        at most ``defaults.SCORING_BATCH_SIZE`` (256).
    name : str, optional
        The dataset name recorded in the ScoreSet's signatures.

    Returns
    -------
    ScoredSet
        A ScoreSet with systems x inputs matrices (NaN where a system has no candidate for an input),
        one scorer per flattened metric field (``rouge-1.recall``, ``bleu``, ...); ``.signatures`` maps
        each scorer to its metric's signature and ``.run`` says what was computed and what was cached.

    Raises
    ------
    InputFileError
        If a candidates or references file is malformed (the message names file, row and field), or
        ``cache`` is not a score cache.
    ParameterError
        If a metric is unknown, two metrics give the same score name, or an option is invalid.
    MetricResourceError
        If a metric needs something absent (WordNet, torch, a model directory).

    Warns
    -----
    Whatever the scorers warn (e.g. :class:`~metaeval.errors.DegenerateWarning` for a text without
    tokens), collected from the workers and shown once per distinct message.

    Notes
    -----
    Scores are identical on every backend and with or without the cache: a pair's scores depend only on
    the scorer and the pair, travel between processes by pickle, and are cached as shortest round-trip
    float text. The cache key is ``(str(scorer.signature), sha256(candidate), sha256(references))``.

    Examples
    --------
    >>> import metaeval as me
    >>> ds = me.score({"sys": {"d1": "the cat sat on the mat"}}, {"d1": ["a cat sat on a mat"]},
    ...               metrics=["rouge"], progress=False)
    >>> round(float(ds.matrix("rouge-1.recall")[0, 0]), 4)
    0.6667
    >>> str(ds.signatures["rouge-1.recall"]).split("|")[0]
    'metric:rouge-1.5.5'
    """
    labels, scorers, prefixed, workers, cache, batch_size = _score_iv(metrics, workers, scheduler, cache,
                                                                      progress, batch_size)
    started = time.perf_counter()
    inputs = load_inputs(candidates, references)
    scorers = _with_reference_corpus(scorers, inputs)
    signatures = [str(s.signature) for s in scorers]
    store = ScoreCache(cache) if cache is not None else None
    found: list[dict[Key, dict[str, float]]] = []
    computed = [0] * len(scorers)
    caught: dict[tuple[type, str], None] = {}
    backend = make_backend(workers=workers, scheduler=scheduler)
    with store if store is not None else nullcontext(), backend, _progress(progress) as bar:
        if store is None:
            backend.start(scorers)  # workers start while the pairs are hashed
        cell_keys, distinct = _pairs(inputs)
        keys = list(distinct)
        for signature in signatures:
            found.append(store.get(signature, keys) if store is not None else {})
        if store is not None and store.rejected:
            n = store.rejected
            rows = "1 cached row" if n == 1 else f"{n} cached rows"
            verb = "was" if n == 1 else "were"
            warnings.warn(f"score cache {str(store.path)!r}: {rows} failed the checksum (the file was altered or"
                          f" damaged) and {verb} dropped; {'its pair is' if n == 1 else 'their pairs are'} scored"
                          " again.", DataWarning, stacklevel=2)
        missing = [[k for k in keys if k not in found[m]] for m in range(len(scorers))]
        size = batch_size or _auto_batch_size(sum(map(len, missing)), backend.parallelism)
        steps = []
        if bar is not None:  # one step per metric; the pairs found in the cache count as done
            for m, label in enumerate(labels):
                steps.append(f"{label} ({len(found[m])} cached)" if found[m] else label)
                bar(len(found[m]), step=steps[m], total=len(keys))

        def batches() -> Iterator[Batch]:
            for m, todo in enumerate(missing):
                for start in range(0, len(todo), size):
                    chunk = tuple(todo[start:start + size])
                    yield Batch(m, chunk, tuple(distinct[k] for k in chunk))

        try:
            for batch, (values, messages) in backend.run(batches(), scorers):
                if store is not None:
                    store.put(signatures[batch.metric], zip(batch.keys, values))
                found[batch.metric].update(zip(batch.keys, values))
                computed[batch.metric] += len(values)
                for message in messages:
                    caught.setdefault(message, None)
                if bar is not None:
                    bar(len(values), step=steps[batch.metric])
        except SchedulerLostError as error:
            raise SchedulerLostError(f"{error} {_kept(found, len(keys), cache)}") from None
    for category, message in caught:
        warnings.warn(message, category if isinstance(category, type) and issubclass(category, Warning) else UserWarning,
                      stacklevel=2)
    matrices, fields = _matrices(inputs, cell_keys, found, labels, prefixed)
    run = ScoringRun(
        backend=backend.name,
        parallelism=backend.parallelism,
        batch_size=size,
        cells=len(cell_keys),
        pairs=len(keys),
        metrics=tuple(
            MetricRun(label, scorer.signature, tuple(fields[m]), computed[m], len(keys) - computed[m])
            for m, (label, scorer) in enumerate(zip(labels, scorers))
        ),
        cache=None if cache is None else str(cache),
        seconds=time.perf_counter() - started,
    )
    return ScoredSet(matrices, systems=inputs.systems, inputs=inputs.inputs, run=run, name=name)


def _kept(found: list[dict], pairs: int, cache: Any) -> str:
    """What a run that stopped half-way leaves for the next one."""
    done = sum(map(len, found))
    total = pairs * len(found)
    if cache is None:
        return (f"{done} of {total} metric x pair scores were done and are lost (no cache): give `cache`"
                " (--cache) to keep finished batches across runs.")
    return (f"{done} of {total} metric x pair scores are kept in the cache {str(cache)!r}: run the same command"
            " again to score only the rest (the scores equal those of an uninterrupted run).")


def _matrices(inputs: ScoringInputs, cell_keys: list[Key], found: list[dict[Key, dict[str, float]]],
              labels: list[str], prefixed: bool) -> tuple[dict[str, np.ndarray], list[list[str]]]:
    """One systems x inputs matrix per flattened field; the fields of every metric."""
    shape = (len(inputs.systems), len(inputs.inputs))
    rows = np.array([i for i, _ in inputs.cells], dtype=np.intp)
    cols = np.array([j for _, j in inputs.cells], dtype=np.intp)
    matrices: dict[str, np.ndarray] = {}
    owners: dict[str, str] = {}
    fields: list[list[str]] = []
    for m, label in enumerate(labels):
        per_cell = [found[m][key] for key in cell_keys]
        names = list(dict.fromkeys(name for values in per_cell for name in values))
        fields.append([])
        for field in names:
            scorer = f"{label}.{field}" if prefixed else field
            if scorer in owners:
                raise ParameterError(
                    f"`metrics` must give every score a distinct name; got {scorer!r} from both {owners[scorer]!r}"
                    f" and {label!r} (pass a mapping {{label: metric}} to prefix each metric's scores)."
                )
            owners[scorer] = label
            matrix = np.full(shape, np.nan)
            matrix[rows, cols] = [values.get(field, np.nan) for values in per_cell]
            matrices[scorer] = matrix
            fields[m].append(scorer)
    return matrices, fields
