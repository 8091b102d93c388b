"""The code that runs where scores are computed: in the main process, a pool worker or a Dask worker.

A batch is scored by :func:`score_batch`: the scorer (sent once as pickled bytes and unpickled once
per process and thread) scores every pair, the result of each pair is flattened to ``{name: float}``,
and the warnings the scorer raised are returned with the scores so that the main process can show
them (a worker's warnings would otherwise be lost in its own stderr).
"""
from __future__ import annotations

import hashlib
import pickle
import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

_PAYLOADS: dict[str, bytes] = {}
_SCORERS: dict[tuple[str, int], Any] = {}
_MAX_SCORERS = 32
# warnings.catch_warnings changes process-wide state: batches that record warnings take turns (threads
# of one Dask worker; pure-Python scorers hold the GIL anyway).
_CAPTURE = threading.Lock()


def payload_digest(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def init_process(payloads: Mapping[str, bytes]) -> None:
    """Pool initializer (after :func:`metaeval.runtime.workers.limit_worker_threads`): keep the pickled scorers."""
    _PAYLOADS.update(payloads)


def ready() -> bool:
    """A no-op task: submitting one per worker starts the pool's processes ahead of the work."""
    return True


def _scorer(digest: str, payload: bytes | None) -> Any:
    key = (digest, threading.get_ident())
    scorer = _SCORERS.get(key)
    if scorer is None:
        scorer = pickle.loads(payload if payload is not None else _PAYLOADS[digest])
        _SCORERS[key] = scorer
        while len(_SCORERS) > _MAX_SCORERS:  # a long-lived Dask worker serves many runs
            del _SCORERS[next(iter(_SCORERS))]
    return scorer


def _flatten(scores: Any, name: str) -> dict[str, float]:
    from ..metrics.registry import flatten_scores

    if isinstance(scores, Mapping):
        return flatten_scores(scores)
    return flatten_scores({name: scores})


def _plain(text: Any) -> Any:
    """A text as the scorer protocol takes it: a string or a list of sentences."""
    return list(text) if isinstance(text, tuple) else text


def score_pairs(scorer: Any, pairs: Sequence[tuple[Any, Any]]) -> tuple[list[dict[str, float]], list[tuple[type, str]]]:
    """Score ``pairs`` with ``scorer``.

    The scorer's ``score_batch(candidates, references_list)`` is used when it has one (embedding
    metrics: one forward pass per batch), ``score(candidate, references)`` per pair otherwise.

    Returns
    -------
    scores : list of dict
        Flattened scores of every pair, in order.
    warnings : list of (category, message)
        The warnings raised while scoring, in order, duplicates removed.
    """
    name = getattr(scorer, "name", type(scorer).__name__)
    with _CAPTURE, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        candidates = [_plain(candidate) for candidate, _ in pairs]
        references = [[_plain(r) for r in refs] for _, refs in pairs]
        batched = getattr(scorer, "score_batch", None)
        if callable(batched):
            raw = list(batched(candidates, references))
            if len(raw) != len(pairs):
                from ..errors import ParameterError

                raise ParameterError(f"`score_batch` of {name!r} must return one result per pair ({len(pairs)});"
                                     f" got {len(raw)}.")
        else:
            raw = [scorer.score(c, r) for c, r in zip(candidates, references)]
        results = [_flatten(values, name) for values in raw]
    seen: dict[tuple[type, str], None] = {}
    for warning in caught:
        seen.setdefault((warning.category, str(warning.message)), None)
    return results, list(seen)


def score_batch(digest: str, payload: bytes | None, pairs: Sequence[tuple[Any, Any]]):
    """:func:`score_pairs` with the scorer pickled in ``payload`` (unpickled once per process and thread)."""
    return score_pairs(_scorer(digest, payload), pairs)


def score_batch_in_pool(digest: str, pairs: Sequence[tuple[Any, Any]]):
    """:func:`score_batch` for a process pool whose initializer received the scorers."""
    return score_batch(digest, None, pairs)


def dumps(scorer: Any) -> bytes:
    """Pickle a scorer for the workers.

    cloudpickle (installed with dask) is used when present, so that scorer classes defined in a script's
    ``__main__`` or a notebook reach the workers by value; plain pickle otherwise. Either way the
    workers read the bytes with :func:`pickle.loads`.
    """
    try:
        import cloudpickle
    except ImportError:
        cloudpickle = pickle
    try:
        return cloudpickle.dumps(scorer, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:  # pickling raises many types (TypeError, PicklingError, AttributeError)
        from ..errors import ParameterError

        raise ParameterError(
            f"`metrics` must be picklable to run in worker processes; got {type(scorer).__name__} ({error})."
        ) from None
