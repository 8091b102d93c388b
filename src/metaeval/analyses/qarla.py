"""QARLA (Amigo, Gonzalo, Penas & Verdejo 2005): QUEEN, KING and JACK of similarity-metric sets on texts.

QARLA evaluates summarizers without human judgments, by the similarity of their summaries (*peers*) to
several human summaries (*models*) of every test case:

- QUEEN of a peer: the probability over model triples that it is at least as similar to a model as two
  models are to each other, for every metric of the set (its system score is the mean over test cases);
- KING of a metric set: the probability that a (left-out) model gets a higher QUEEN than every peer;
- JACK of the peer set: the probability that, for a model, two peers are closer to it than to each other.

:func:`qarla_similarities` computes the similarities once (the slow, text part);
:func:`qarla` turns them into QUEEN, KING and JACK of each metric set (the probabilities are in
:mod:`metaeval.stats.frameworks.qarla`), and with human scores correlates the system-level QUEEN with them.
Definitions, decisions and a run on SummEval: docs/qarla.md.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as iv
from ..data.scoreset import ScoreSet
from ..data.texts import label_field, read_records, text_field, texts_field
from ..errors import DataWarning, InputFileError, ParameterError, check_int
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.correlations.coefficients import correlation
from ..stats.frameworks.qarla import MIN_MODELS_KING, qarla_arrays
from . import _common as common
from .qarla_similarity import DEFAULT_SIMILARITIES, canonical_similarity, check_sources, similarity_matrices

__all__ = ["QarlaResult", "QarlaSimilarities", "qarla", "qarla_similarities", "read_qarla_texts"]


@dataclass(frozen=True)
class QarlaSimilarities(ResultMixin):
    """Similarities between every two summaries of every test case (input).

    Attributes
    ----------
    similarities : tuple of str
        The metrics (canonical names, e.g. ``'rouge-1.a'``, ``'rpre-w-1.2.b'``, ``'tvm-64'``).
    systems : tuple of str
        The peers (automatic summarizers), ``P``.
    inputs : tuple of str
        The test cases, ``T``.
    n_models : int
        ``M`` models (references) per test case.
    values : numpy.ndarray
        ``(X, T, P + M, P + M)``: ``values[x, t, u, v] = x(u, v)``, the peers first, then the models.
    signature : Signature
    """

    similarities: tuple[str, ...]
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    n_models: int
    values: np.ndarray = field(metadata={"serialize": "exclude"})
    signature: Signature

    def subset(self, similarities: Sequence[str]) -> np.ndarray:
        """The ``(len(similarities), T, K, K)`` values of the named metrics (canonical or short names)."""
        names = [canonical_similarity(s) for s in similarities]
        missing = [n for n in names if n not in self.similarities]
        if missing:
            raise ParameterError(f"`metric_sets` must use computed similarities ({', '.join(self.similarities)}); "
                                 f"got {missing[0]!r}.")
        return self.values[[self.similarities.index(n) for n in names]]


def read_qarla_texts(path) -> tuple[dict[str, dict[str, str]], dict[str, list[str]], dict[str, list[str]] | None]:
    """Peers, models and (optional) sources from a JSON Lines file, one line per (system, input).

    Each line: ``{"doc_id", "system_id", "summary", "references": [texts]}`` (SummEval's texts.jsonl), and
    optionally ``"source"``: the input's source document (a text or a list of texts, for TVM). Lines of
    one input must repeat the same references (and source).

    Returns
    -------
    (candidates, references, sources)
        ``candidates[system][input]``, ``references[input]``, ``sources[input]`` or None when no line has
        a source.
    """
    candidates: dict[str, dict[str, str]] = {}
    references: dict[str, list[str]] = {}
    sources: dict[str, list[str]] = {}
    for row, record in read_records(path):
        doc = label_field(path, row, record, "doc_id")
        system = label_field(path, row, record, "system_id")
        refs = texts_field(path, row, record, "references")
        if references.setdefault(doc, refs) != refs:
            raise InputFileError(path, f"the lines of one input must repeat its references; got other references "
                                       f"for {doc!r}.", row=row, column="references")
        if "source" in record:
            value = record["source"]
            docs = [text_field(path, row, record, "source")] if isinstance(value, str) else \
                texts_field(path, row, record, "source")
            if sources.setdefault(doc, docs) != docs:
                raise InputFileError(path, f"the lines of one input must repeat its source; got another source for "
                                           f"{doc!r}.", row=row, column="source")
        cells = candidates.setdefault(system, {})
        if doc in cells:
            raise InputFileError(path, f"(system_id, doc_id) must be unique; got {(system, doc)!r} again.", row=row)
        cells[doc] = text_field(path, row, record, "summary")
    if sources and set(sources) != set(references):
        missing = next(d for d in references if d not in sources)
        raise InputFileError(path, f"every input must have a source when one has; got none for {missing!r}.",
                             column="source")
    return candidates, references, sources or None


def _similarities_iv(candidates, references, similarities, inputs, sources):
    if not isinstance(candidates, Mapping) or not candidates:
        raise ParameterError(f"`candidates` must be a non-empty mapping system -> {{input: text}}; got "
                             f"{candidates!r:.80}.")
    if not isinstance(references, Mapping) or not references:
        raise ParameterError(f"`references` must be a non-empty mapping input -> [texts]; got {references!r:.80}.")
    if isinstance(similarities, str) or not isinstance(similarities, Sequence) or not similarities:
        raise ParameterError(f"`similarities` must be a non-empty list of names; got {similarities!r}.")
    names = tuple(dict.fromkeys(canonical_similarity(s) for s in similarities))
    systems = tuple(str(s) for s in candidates)
    shared = [i for i in references if all(i in candidates[s] for s in candidates)]
    if isinstance(inputs, (int, np.integer)) and not isinstance(inputs, bool):
        inputs = tuple(shared[:check_int("inputs", inputs, minimum=1)])
    elif inputs is None:
        inputs = tuple(shared)
    else:
        if isinstance(inputs, str) or not isinstance(inputs, Sequence):
            raise ParameterError(f"`inputs` must be a number of inputs or a list of input labels; got {inputs!r}.")
        unknown = [i for i in inputs if i not in shared]
        if unknown:
            raise ParameterError(f"`inputs` must be inputs with references and a summary of every system; got "
                                 f"{unknown[0]!r}.")
        inputs = tuple(inputs)
    if not inputs:
        raise ParameterError("`candidates` must have a summary of every system for some input with references; "
                             "got none.")
    counts = {i: len(references[i]) for i in inputs}
    if len(set(counts.values())) > 1 or min(counts.values()) < MIN_MODELS_KING:
        raise ParameterError(f"`references` must give every input the same number (>= {MIN_MODELS_KING}) of models; "
                             f"got {dict(list(counts.items())[:3])!r}.")
    if len(systems) < 2:
        raise ParameterError(f"`candidates` must hold at least 2 systems (JACK needs a pair of peers); got "
                             f"{len(systems)}.")
    return names, systems, inputs, counts[inputs[0]], check_sources(sources, inputs)


def qarla_similarities(candidates: Mapping[str, Mapping[str, str]], references: Mapping[str, Sequence[str]], *,
                       similarities: Sequence[str] = DEFAULT_SIMILARITIES, inputs: int | Sequence[str] | None = None,
                       sources: Mapping[str, Any] | None = None, progress: Any = None) -> QarlaSimilarities:
    """Similarities ``x(u, v)`` between every two summaries (peers and models) of every input.

    Parameters
    ----------
    candidates : mapping
        ``candidates[system][input]``: the peers' summaries (a text, one sentence per line).
    references : mapping
        ``references[input]``: the models (human summaries); the same number ``M >= 4`` for every input.
    similarities : sequence of str
        Metric names (:mod:`metaeval.analyses.qarla_similarity`): ``rouge-<m>``, ``rpre-<m>`` with
        ``<m>`` in ``1, 2, 3, 4, l, w-1.2, s4, su4`` and an optional type ``.a`` / ``.b`` / ``.c``, ``tvm-<n>``.
    inputs : int or sequence of str, optional
        The first ``inputs`` inputs (in the order of ``references``), or these labels; default all the
        inputs with references and a summary of every system.
    sources : mapping, optional
        ``sources[input]``: the source document(s), for TVM; default the input's summaries pooled
        (peers and models; see docs/qarla.md, Decisions).
    progress : callable, optional
        Called with no argument after each input (for progress bars).

    Returns
    -------
    QarlaSimilarities
    """
    labelled = inputs is not None and not isinstance(inputs, (int, np.integer))  # labels: signed by name
    names, systems, inputs, m, sources = _similarities_iv(candidates, references, similarities, inputs, sources)
    k = len(systems) + m
    values = np.empty((len(names), len(inputs), k, k))
    for t, label in enumerate(inputs):
        texts = [candidates[s][label] for s in systems] + list(references[label])
        values[:, t] = similarity_matrices(texts, names, source=None if sources is None else sources[label])
        if progress is not None:
            progress()
    tvm_source = "none" if not any(n.startswith("tvm") for n in names) else ("given" if sources else "summaries")
    signature = Signature.of(analysis="qarla-similarities", similarities=",".join(names), systems=len(systems),
                             inputs=len(inputs), **({"input_labels": ",".join(inputs)} if labelled else {}),
                             models=m, tvm_source=tvm_source)
    return QarlaSimilarities(names, systems, inputs, m, values, signature)


@dataclass(frozen=True)
class QarlaResult(ResultMixin):
    """QUEEN, KING and JACK of each metric set (Amigo et al. 2005).

    Attributes
    ----------
    metric_sets : tuple of str
        Each set as its metrics joined by ``+``.
    systems : tuple of str
        The peers, ``P``.
    n_inputs, n_models : int
    king : numpy.ndarray
        ``(S,)`` KING: share of (input, model) where the model's QUEEN (over the other models) is above
        every peer's (over the same models).
    king_tied : numpy.ndarray
        ``(S,)`` share of (input, model) where the model's QUEEN equals the best peer's (not a success).
    jack : numpy.ndarray
        ``(S,)`` JACK: share of (input, model) with a pair of peers closer to the model than to each other.
    jack_curve : numpy.ndarray
        ``(S, P - 1)`` JACK with the first 2, ..., P systems.
    queen : numpy.ndarray
        ``(S, P)`` each system's QUEEN averaged over the inputs.
    queen_models : numpy.ndarray
        ``(S,)`` the models' QUEEN (each over the other models) averaged over models and inputs.
    human : str or None
        The human scorer correlated with QUEEN; ``human_scores`` ``(P,)`` its system means over the inputs.
    pearson, kendall : numpy.ndarray
        ``(S,)`` system-level Pearson r and Kendall tau-b between QUEEN and ``human_scores`` (NaN without
        a human).
    signature : Signature
    n_human_inputs : int
        The inputs of the similarities that the human scores: each system's human score is its mean over
        them (0 without a human).
    inputs_without_human : tuple of str
        The inputs of the similarities that the human does not score (left out of the human means).
    """

    metric_sets: tuple[str, ...]
    systems: tuple[str, ...]
    n_inputs: int
    n_models: int
    king: np.ndarray
    king_tied: np.ndarray
    jack: np.ndarray
    jack_curve: np.ndarray
    queen: np.ndarray
    queen_models: np.ndarray
    human: str | None
    human_scores: np.ndarray
    pearson: np.ndarray
    kendall: np.ndarray
    signature: Signature
    n_human_inputs: int = 0
    inputs_without_human: tuple[str, ...] = ()

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per metric set."""
        return [{"metric_set": s, "king": common.plain(self.king[i]), "king_tied": common.plain(self.king_tied[i]),
                 "jack": common.plain(self.jack[i]), "queen_models": common.plain(self.queen_models[i]),
                 "queen_systems": common.plain(float(self.queen[i].mean())),
                 "pearson": common.plain(self.pearson[i]), "kendall": common.plain(self.kendall[i])}
                for i, s in enumerate(self.metric_sets)]

    def queen_frame(self):
        """One row per (metric set, system): its QUEEN and its human score."""
        import pandas as pd

        return pd.DataFrame([{"metric_set": s, "system": name, "queen": common.plain(self.queen[i, j]),
                              "human": common.plain(self.human_scores[j])}
                             for i, s in enumerate(self.metric_sets) for j, name in enumerate(self.systems)])


def _metric_sets_iv(sims: QarlaSimilarities, metric_sets) -> list[tuple[str, ...]]:
    if metric_sets is None:
        sets = [(n,) for n in sims.similarities]
        return sets + [tuple(sims.similarities)] if len(sims.similarities) > 1 else sets
    if isinstance(metric_sets, str) or not isinstance(metric_sets, Sequence) or not metric_sets:
        raise ParameterError(f"`metric_sets` must be a non-empty list of metric sets (lists of names); got "
                             f"{metric_sets!r}.")
    out = []
    for entry in metric_sets:
        names = entry.split("+") if isinstance(entry, str) else entry
        if isinstance(names, str) or not isinstance(names, Sequence) or not names:
            raise ParameterError(f"`metric_sets` must hold non-empty lists of similarity names; got {entry!r}.")
        sims.subset(names)  # names must be computed
        out.append(tuple(dict.fromkeys(canonical_similarity(n) for n in names)))
    return out


def _shown(labels, first: int = 3) -> str:
    return ", ".join(repr(x) for x in labels[:first]) + (f", ... ({len(labels) - first} more)" if len(labels) > first else "")


def _human_iv(sims: QarlaSimilarities, ds, human):
    """The human scorer and each system's mean of it over the inputs of the similarities that it scores;
    a :class:`DataWarning` names the inputs left out on either side (of the texts without a human score,
    of the scores outside the texts), since the human system scores then differ from the dataset's own."""
    if ds is None and human is None:
        return None, np.full(len(sims.systems), np.nan), ()
    ds = iv.check_scoreset(ds)
    human = common.check_human(ds, human)
    missing = [s for s in sims.systems if s not in ds.systems]
    if missing:
        raise ParameterError(f"`ds` must score every system of the similarities; got no row for {missing[0]!r}.")
    rows = [ds.systems.index(s) for s in sims.systems]
    scored = set(np.asarray(ds.inputs)[~np.isnan(ds.matrix(human)[rows]).all(axis=0)])
    shared = [i for i in sims.inputs if i in scored]
    if not shared:
        raise ParameterError("`ds` must score the inputs of the similarities; got none of them.")
    unscored = tuple(i for i in sims.inputs if i not in scored)
    outside = [i for i in ds.inputs if i in scored and i not in set(sims.inputs)]
    if unscored or outside:
        parts = [f"qarla: the human {human!r} of each system is its mean over the {len(shared)} inputs of the texts"
                 f" it scores"]
        if unscored:
            parts.append(f"{len(unscored)} inputs of the texts have no {human!r} score: {_shown(unscored)}")
        if outside:
            parts.append(f"{len(outside)} of the {len(scored)} inputs it scores are not among the texts' inputs:"
                         f" {_shown(outside)}")
        warnings.warn("; ".join(parts) + ".", DataWarning, stacklevel=3)
    matrix = ds.matrix(human)[rows][:, [ds.inputs.index(i) for i in shared]]
    with np.errstate(invalid="ignore"):
        return human, np.nanmean(matrix, axis=1), unscored


def qarla(similarities: QarlaSimilarities, *, metric_sets: Sequence[Sequence[str] | str] | None = None,
          ds: ScoreSet | None = None, human: str | None = None) -> QarlaResult:
    """QUEEN, KING and JACK of metric sets (Amigo, Gonzalo, Penas & Verdejo 2005).

    Parameters
    ----------
    similarities : QarlaSimilarities
        From :func:`qarla_similarities`.
    metric_sets : sequence, optional
        Sets of similarity names (a list of names, or one string joined by ``+``, e.g.
        ``'rpre-w-1.2.b+tvm-64'``); default each similarity alone, then all of them together.
    ds : ScoreSet, optional
        Human scores of the systems; with ``human``, QUEEN's system-level correlations are reported.
    human : str, optional
        The human scorer of ``ds`` (system score: its mean over the inputs of ``similarities``).

    Returns
    -------
    QarlaResult

    Notes
    -----
    With models ``M`` and peers ``A`` of one input and a metric set ``X`` (``x(u, v)``: the similarity of
    ``v`` to ``u``)::

        QUEEN_{X,M}(a) = P_{m, m', m''}(for all x in X: x(a, m) >= x(m', m''))
        KING_{M,A}(X)  = P_m(for all a in A: QUEEN_{M-{m},X}(m) > QUEEN_{M-{m},X}(a))
        JACK(X, M, A)  = P_m(exists a != a': for all x: x(a, a') <= x(a, m), x(a', a) <= x(a', m),
                             QUEEN(a) > 0, QUEEN(a') > 0)

    over the ordered triples of distinct models; KING and JACK are averaged over models and inputs,
    QUEEN over inputs. See :mod:`metaeval.stats.frameworks.qarla` and docs/qarla.md (Decisions).

    References
    ----------
    .. [1] E. Amigo, J. Gonzalo, A. Penas and F. Verdejo, "Evaluating DUC 2004 Tasks with the QARLA
       Framework", ACL Workshop on Intrinsic and Extrinsic Evaluation Measures for MT and/or
       Summarization, 2005.
    .. [2] E. Amigo, J. Gonzalo, A. Penas and F. Verdejo, "QARLA: a Framework for the Evaluation of Text
       Summarization Systems", ACL 2005.
    """
    if not isinstance(similarities, QarlaSimilarities):
        raise ParameterError(f"`similarities` must be a QarlaSimilarities (from qarla_similarities); got "
                             f"{type(similarities).__name__}.")
    sets = _metric_sets_iv(similarities, metric_sets)
    human, human_scores, unscored = _human_iv(similarities, ds, human)
    p = len(similarities.systems)
    rows = [qarla_arrays(similarities.subset(names), p) for names in sets]
    queen = np.array([r.queen_peers.mean(axis=0) for r in rows])
    if human is None:
        pearson = kendall = np.full(len(sets), np.nan)
    else:
        ok = np.isfinite(human_scores)
        pearson = np.array([correlation(q[ok], human_scores[ok], "pearson") for q in queen], dtype=float)
        kendall = np.array([correlation(q[ok], human_scores[ok], "kendall-b") for q in queen], dtype=float)
    signature = similarities.signature.with_fields(analysis="qarla", metric_sets=";".join("+".join(s) for s in sets),
                                                   human=human, **({} if ds is None else {"dataset": ds.name}),
                                                   triples="distinct", king="leave-one-out-strict")
    return QarlaResult(metric_sets=tuple("+".join(s) for s in sets), systems=similarities.systems,
                       n_inputs=len(similarities.inputs), n_models=similarities.n_models,
                       king=np.array([r.king for r in rows]),
                       king_tied=np.array([r.king_tied.mean() for r in rows]),
                       jack=np.array([r.jack for r in rows]), jack_curve=np.array([r.jack_curve for r in rows]),
                       queen=queen, queen_models=np.array([r.queen_models.mean() for r in rows]),
                       human=human, human_scores=human_scores, pearson=pearson, kendall=kendall,
                       signature=signature, n_human_inputs=len(similarities.inputs) - len(unscored) if human else 0,
                       inputs_without_human=unscored)
