"""BERTScore (Zhang et al. 2020): greedy cosine matching of contextual token embeddings.

With unit-norm token embeddings ``x_i`` (candidate) and ``y_j`` (reference) from one layer of a local
model (:class:`.embedding.LocalEncoder`) and token weights ``w`` (1, or idf),

``P = sum_i w(x_i) max_j x_i . y_j / sum_i w(x_i)``, ``R = sum_j w(y_j) max_i x_i . y_j / sum_j w(y_j)``,
``F1 = 2 P R / (P + R)``.

idf (optional): ``idf(t) = log((M + 1) / (df(t) + 1))`` over the ``M`` texts given as ``idf_references``
(the corpus' references), unseen word pieces ``log(M + 1)``, as ``bert_score``. No baseline rescaling.
With several references the one with the highest F1 is kept (its P, R and F1 are reported).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..signature import Signature
from ._inputs import check_bool, check_pair, warn_degenerate
from .embedding import DEFAULT_BATCH_SIZE, LocalEncoder, idf_fingerprint

__all__ = ["BertScore", "EmbeddingScorer"]


class EmbeddingScorer(ABC):
    """Shared options and batching of the embedding metrics (see :class:`BertScore`)."""

    name = ""
    #: Cosine-based scores of unit vectors (``scale`` field of the signature).
    scale = "0-1"
    label = ""

    def __init__(self, *, model_dir: Any = None, layer: int | None = None, idf: bool = False,
                 idf_references: Sequence[str] | None = None, batch_size: int = DEFAULT_BATCH_SIZE,
                 num_threads: int | None = None, device: str = "cpu", max_length: int | None = None):
        self.idf = check_bool("idf", idf)
        if self.idf:
            if idf_references is None or isinstance(idf_references, str) or len(idf_references) == 0 or not all(
                isinstance(t, str) for t in idf_references
            ):
                raise ParameterError(
                    "`idf_references` must be a non-empty list of reference texts when `idf=True` (idf is computed "
                    f"from the corpus' references); got {idf_references!r}."
                )
            self.idf_references = list(idf_references)
        elif idf_references is not None:
            raise ParameterError(f"`idf_references` must be None when `idf=False`; got {type(idf_references).__name__}.")
        else:
            self.idf_references = None
        self.encoder = LocalEncoder(self.label, model_dir, layer=layer, batch_size=batch_size,
                                    num_threads=num_threads, device=device, max_length=max_length)
        self._idf_table: tuple[dict[int, float], float] | None = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_idf_table"] = None
        return state

    def _signature_fields(self) -> dict[str, Any]:
        e = self.encoder
        return {
            "metric": self.name,
            "model": e.model_name,
            "model_sha256": e.fingerprint,
            "layer": e.layer,
            "max_length": e.max_length,
            "idf": f"{idf_fingerprint(self.idf_references)}({len(self.idf_references)} texts)" if self.idf else False,
        }

    def _signature(self, **fields: Any) -> Signature:
        return Signature.of(**self._signature_fields(), **fields, scale=self.scale)

    def _weights(self, ids: list[int]) -> np.ndarray:
        if not self.idf:
            return np.ones(len(ids))
        if self._idf_table is None:
            self._idf_table = self.encoder.idf(self.idf_references)
        table, unseen = self._idf_table
        return np.array([table.get(t, unseen) for t in ids], dtype=np.float64)

    def score(self, candidate: Any, references: Sequence[Any]) -> dict[str, Any]:
        """Scores of one candidate against its references (see :meth:`score_batch`)."""
        return self.score_batch([candidate], [references])[0]

    def score_batch(self, candidates: Sequence[Any], references: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
        """Scores of many candidates, each against its own references, encoding all texts in batches.

        Equal to ``[score(c, r) for c, r in zip(candidates, references)]`` up to floating-point rounding
        of the batched forward passes (about 1e-7).
        """
        if isinstance(candidates, str) or len(candidates) != len(references):
            raise ParameterError(
                "`references` must hold one list of references per candidate; got "
                f"{len(references)} lists for {1 if isinstance(candidates, str) else len(candidates)} candidates."
            )
        pairs = [check_pair(c, r) for c, r in zip(candidates, references)]
        texts = sorted({t for c, refs in pairs for t in [c, *refs]})
        encoded = dict(zip(texts, self.encoder.encode(texts)))
        out = []
        for cand, refs in pairs:
            c_ids, c_emb = encoded[cand]
            if len(c_ids) == 0 or any(len(encoded[r][0]) == 0 for r in refs):
                warn_degenerate(
                    f"`candidate` and `references` must contain tokens for {self.label} to be defined; got an "
                    "empty text (scores are NaN)."
                )
                out.append(self._nan())
                continue
            per_ref = [self._pair(c_ids, c_emb, *encoded[r]) for r in refs]
            out.append(self._best(per_ref))
        return out

    @abstractmethod
    def _nan(self) -> dict[str, Any]:
        """Defined by each concrete scorer."""

    @abstractmethod
    def _pair(self, c_ids, c_emb, r_ids, r_emb) -> Any:
        """Defined by each concrete scorer."""

    @abstractmethod
    def _best(self, per_ref: list) -> dict[str, Any]:
        """Defined by each concrete scorer."""


class BertScore(EmbeddingScorer):
    """BERTScore precision, recall and F1 with a local model (see the module docstring).

    Parameters
    ----------
    model_dir : path
        A local Hugging Face model directory (required; nothing is downloaded).
    layer : int or None
        Hidden layer whose states are the token embeddings (0 = embedding layer); None = last layer.
    idf : bool, default False
        Weight tokens by idf computed from ``idf_references``.
    idf_references : list of str or None
        The reference texts of the corpus (required with ``idf=True``); their hash is in the signature.
    batch_size : int, default 32
        Texts per forward pass.
    num_threads : int or None
        ``torch.set_num_threads`` (None: torch's default); 1 inside parallel workers.
    device : str, default 'cpu'
    max_length : int or None
        Longest input in word pieces (longer texts are truncated, with a warning).

    Raises
    ------
    MetricResourceError
        If torch / transformers are missing or ``model_dir`` is not a model directory.

    Notes
    -----
    Special tokens ([CLS], [SEP]) are left out of the matching altogether (``bert_score`` keeps them as
    match candidates with weight 0). Scores are on the cosine scale (no baseline rescaling).

    References
    ----------
    .. [1] T. Zhang, V. Kishore, F. Wu, K. Q. Weinberger, Y. Artzi, "BERTScore: Evaluating Text Generation
       with BERT", ICLR 2020.
    """

    name = "bertscore"
    label = "BERTScore"

    @property
    def signature(self) -> Signature:
        return self._signature(matching="greedy-cosine", rescale=False, references="best-f1")

    def __repr__(self) -> str:
        return f"BertScore(model_dir={str(self.encoder.model_dir)!r}, layer={self.encoder.layer}, idf={self.idf})"

    def _nan(self) -> dict[str, Any]:
        return {"bertscore": {"precision": math.nan, "recall": math.nan, "f1": math.nan}}

    def _pair(self, c_ids, c_emb, r_ids, r_emb) -> tuple[float, float, float]:
        sim = c_emb @ r_emb.T
        wc, wr = self._weights(c_ids), self._weights(r_ids)
        if wc.sum() <= 0 or wr.sum() <= 0:
            warn_degenerate(
                "`idf_references` must give some token of each text a weight > 0 for BERTScore to be defined; got "
                "a text whose word pieces occur in every idf reference (score is NaN)."
            )
        precision = float(wc @ sim.max(axis=1) / wc.sum()) if wc.sum() > 0 else math.nan
        recall = float(wr @ sim.max(axis=0) / wr.sum()) if wr.sum() > 0 else math.nan
        f1 = 2 * precision * recall / (precision + recall) if precision + recall != 0 else 0.0
        return precision, recall, f1

    def _best(self, per_ref: list) -> dict[str, Any]:
        k = max(range(len(per_ref)), key=lambda i: per_ref[i][2])
        precision, recall, f1 = per_ref[k]
        return {"bertscore": {"precision": precision, "recall": recall, "f1": f1}}
