"""Syntactic MT metrics of Liu & Gildea (2005): STM, HWCM and DSTM, with corpus-level statistics.

Each metric compares the parse of a candidate with the parses of its references (the user parses them;
:mod:`metaeval.metrics.syntactic_trees` reads the trees) by BLEU-style clipped overlap of units of
growing size ``n = 1 .. D``, averaged arithmetically over ``n``:

.. math::

    \\mathrm{STM} = \\frac{1}{D} \\sum_{n=1}^{D}
        \\frac{\\sum_{t \\in \\mathrm{units}_n(hyp)} \\mathrm{count}_{clip}(t)}{\\sum_{t \\in \\mathrm{units}_n(hyp)} \\mathrm{count}(t)}

with ``count_clip(t) = min(count_hyp(t), max_r count_r(t))``, the maximum over single references [1]_.

* ``stm`` (subtree metric): units are the depth-``n`` subtrees of constituency trees over labels (words
  removed); input: Penn Treebank bracketed trees.
* ``hwcm`` (headword chain metric): units are the ``n``-word chains down dependency paths; input: CoNLL-U
  or CoNLL-X dependency trees.
* ``dstm`` (dependency subtree metric): units are the depth-``n`` subtrees of the dependency tree with
  words as labels, which include relations of several words that are not on one chain.

Per item the sufficient statistics are ``[m_1 .. m_D, t_1 .. t_D]`` (clipped matches and hypothesis totals
per size); the score of summed statistics is ``mean_{n : t_n > 0} m_n / t_n``. Sizes with no hypothesis
unit (``t_n = 0``: a tree shallower than ``n``, a sentence with no chain of ``n`` words) are left out of
the mean, like sacrebleu's effective order for sentence BLEU; the score is in [0, 1].

A candidate or reference is a text holding one or more trees (all of them are counted, as one
segment), or a list of such texts; several trees of a text pool their units. The tree kernel metrics of
the paper (TKM, DTKM: Collins & Duffy cosine) are not provided (docs/syntactic.md, "Decisions").

References
----------
.. [1] D. Liu and D. Gildea, "Syntactic Features for Evaluation of Machine Translation", Proceedings of
   the ACL Workshop on Intrinsic and Extrinsic Evaluation Measures for Machine Translation and/or
   Summarization (ACL-05 workshop), pp. 25-32, 2005.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ParameterError, check_choice, check_int
from ..signature import Signature
from ._inputs import check_bool
from .syntactic_heads import to_dependencies
from .syntactic_trees import dependency_subtrees, headword_chains, parse_brackets, parse_conll, subtrees

__all__ = ["DEFAULT_DEPTH", "DEPENDENCY_INPUTS", "Dstm", "Hwcm", "Stm", "overlap_statistics", "overlap_score"]

#: Default maximum size D of each metric: the paper's worked STM example uses depth 3, its sentence-level
#: tables peak at length/depth 2-3 and its corpus-level table at 4-5 (docs/syntactic.md, "Decisions").
DEFAULT_DEPTH = {"stm": 3, "hwcm": 4, "dstm": 3}
#: The largest size D accepted: deeper than any parse tree of a sentence, and a bound on the 2 D statistics
#: and D unit counters kept per text.
MAX_DEPTH = 100


#: References whose units a scorer remembers (cleared when full).
_MEMO_SIZE = 4096

#: How HWCM and DSTM read a tree: CoNLL-U / CoNLL-X dependencies, or bracketed constituency trees turned
#: into dependencies by Collins' (1999) head rules, as the paper did.
DEPENDENCY_INPUTS = ("conll", "brackets")


def overlap_statistics(hypothesis: Sequence[Counter], references: Sequence[Sequence[Counter]]) -> np.ndarray:
    """``[m_1 .. m_D, t_1 .. t_D]``: clipped matches and totals of the hypothesis units per size.

    ``hypothesis[n - 1]`` counts the size-``n`` units of the hypothesis, ``references[r][n - 1]`` those of
    reference ``r``; a unit's count is clipped to its largest count in a single reference.
    """
    depth = len(hypothesis)
    stats = np.zeros(2 * depth, dtype=np.float64)
    for n, counts in enumerate(hypothesis):
        stats[depth + n] = sum(counts.values())
        stats[n] = sum(min(c, max((ref[n].get(unit, 0) for ref in references), default=0))
                       for unit, c in counts.items())
    return stats


def overlap_score(sums: np.ndarray) -> np.ndarray:
    """Scores from (summed) statistics ``(..., 2D) -> (...)``: mean over sizes with ``t_n > 0`` of ``m_n / t_n``.

    NaN where no size has a unit (an empty corpus).
    """
    sums = np.asarray(sums, dtype=np.float64)
    depth = sums.shape[-1] // 2
    matches, totals = sums[..., :depth], sums[..., depth:]
    present = totals > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(present, matches / np.where(present, totals, 1.0), 0.0)
        used = present.sum(axis=-1)
        return np.where(used > 0, ratios.sum(axis=-1) / np.where(used > 0, used, 1), np.nan)


def _text(name: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)) and all(
            isinstance(s, str) for s in value):
        return "\n".join(value)
    raise ParameterError(f"`{name}` must be a text of parse trees or a list of such texts (str); got {value!r}.")


class _SyntacticOverlap(ABC):
    """Common machinery: parse, count units, clip, score (see the module docstring)."""

    name = ""
    scale = "0-1"
    input_format = ""

    def __init__(self, *, depth: int | None = None, lowercase: bool = False):
        self.depth = check_int("depth", DEFAULT_DEPTH[self.name] if depth is None else depth, minimum=1)
        if self.depth > MAX_DEPTH:
            raise ParameterError(f"`depth` must be an integer in [1, {MAX_DEPTH}]; got {depth!r}.")
        self.lowercase = check_bool("lowercase", lowercase)
        self._memo: dict[str, list[Counter]] = {}

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_memo": {}}  # the memo of parsed references is not shipped to workers

    @property
    def signature(self) -> Signature:
        trees = self.input_format
        if trees == "brackets" and self.name != "stm":
            trees = "brackets-collins99-heads"
        return Signature.of(metric=self.name, depth=self.depth, lowercase=self.lowercase, trees=trees,
                            references="clip-max", scale=self.scale)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(depth={self.depth}, lowercase={self.lowercase})"

    @abstractmethod
    def units(self, text: str, name: str) -> list[Counter]:
        """The per-size unit counts (index ``n - 1``: units of size ``n``) of one text of parse trees."""

    def statistics(self, candidate: Any, references: Sequence[Any]) -> np.ndarray:
        """``[m_1 .. m_D, t_1 .. t_D]`` of one candidate against its references (parsed from their texts)."""
        if isinstance(references, (str, bytes)) or not isinstance(references, Sequence) or len(references) == 0:
            raise ParameterError("`references` must be a non-empty list of references (each a text of parse trees); "
                                 f"got {references!r}.")
        hypothesis = self.units(_text("candidate", candidate), "candidate")
        refs = [self._reference_units(_text("references", r)) for r in references]
        return overlap_statistics(hypothesis, refs)

    def _reference_units(self, text: str) -> list[Counter]:
        """Units of a reference, remembered: every system's candidate for an input meets the same references."""
        units = self._memo.get(text)
        if units is None:
            if len(self._memo) >= _MEMO_SIZE:
                self._memo.clear()
            units = self._memo[text] = self.units(text, "references")
        return units

    def score(self, candidate: Any, references: Sequence[Any]) -> dict[str, float]:
        """``{name: score}`` of one candidate against its references."""
        return {self.name: float(overlap_score(self.statistics(candidate, references)))}

    def corpus_score(self, statistics: Sequence[np.ndarray]) -> dict[str, float]:
        """Corpus score from the items' :meth:`statistics`: the per-size fractions of the summed counts."""
        if len(statistics) == 0:
            raise ParameterError(f"`statistics` must be a non-empty list of statistics arrays; got {statistics!r}.")
        return {self.name: float(overlap_score(np.vstack([np.asarray(s, dtype=np.float64) for s in statistics])
                                               .sum(axis=0)))}

    # CorpusStatistic protocol (metaeval.metrics.corpus_statistics)
    def item_statistics(self, hypotheses: Sequence[Any], references: Sequence[Sequence[Any]]) -> np.ndarray:
        """Statistics ``(M, 2D)``; ``references[r][j]`` is the r-th reference of item j (sacrebleu's layout)."""
        if isinstance(hypotheses, str):
            raise ParameterError(f"`hypotheses` must be a list of texts of parse trees; got the string {hypotheses!r}.")
        rows = [self.statistics(h, [stream[j] for stream in references]) for j, h in enumerate(hypotheses)]
        return np.vstack(rows).reshape(len(hypotheses), 2 * self.depth)

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        """Scores from summed statistics ``(..., 2D) -> (...)`` (:func:`overlap_score`)."""
        return overlap_score(sums)


class Stm(_SyntacticOverlap):
    """Subtree metric STM (Liu & Gildea 2005): clipped overlap of constituency subtrees of depth 1..D.

    Parameters
    ----------
    depth : int, default 3
        D, the largest subtree depth (``DEFAULT_DEPTH['stm']``).
    lowercase : bool, default False
        Lower-case the labels before matching (labels are case-sensitive by default).

    Notes
    -----
    Candidates and references are Penn Treebank bracketed trees. Words are ignored: a preterminal
    ``(NN pen)`` is the leaf ``NN``. See the module docstring for the formula.

    References
    ----------
    .. [1] D. Liu and D. Gildea, "Syntactic Features for Evaluation of Machine Translation", ACL-05
       workshop on evaluation measures for MT and/or summarization, 2005.

    Examples
    --------
    >>> from metaeval.metrics import Stm
    >>> Stm().score("(S (NP (PRP I)) (VP (VBD had) (NP (DT a) (NN dog))))",
    ...             ["(S (NP (PRP I)) (VP (VBD had) (NP (DT a) (NN dog))))"])
    {'stm': 1.0}
    """

    name = "stm"
    input_format = "brackets"

    def units(self, text: str, name: str) -> list[Counter]:
        counts = subtrees(parse_brackets(text, name=name), self.depth)
        if not self.lowercase:
            return counts
        return [Counter(_lower_labels(k) for k in c.elements()) for c in counts]


def _lower_labels(key: tuple) -> tuple:
    if len(key) == 1:
        return (key[0].lower(),)
    return (key[0].lower(), tuple(_lower_labels(k) for k in key[1]))


class _DependencyOverlap(_SyntacticOverlap):
    def __init__(self, *, depth: int | None = None, lowercase: bool = False, trees: str = "conll"):
        super().__init__(depth=depth, lowercase=lowercase)
        self.input_format = check_choice("trees", trees, DEPENDENCY_INPUTS)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(depth={self.depth}, lowercase={self.lowercase}, trees={self.input_format!r})"

    def dependencies(self, text: str, name: str) -> list:
        if self.input_format == "conll":
            return parse_conll(text, name=name)
        return [to_dependencies(t) for t in parse_brackets(text, name=name)]


class Hwcm(_DependencyOverlap):
    """Headword chain metric HWCM (Liu & Gildea 2005): clipped overlap of dependency chains of 1..D words.

    Parameters
    ----------
    depth : int, default 4
        D, the longest chain in words (``DEFAULT_DEPTH['hwcm']``).
    lowercase : bool, default False
        Lower-case the words (the FORM column) before matching.
    trees : {'conll', 'brackets'}, default 'conll'
        The input: CoNLL-U / CoNLL-X dependencies, or bracketed constituency trees converted with
        Collins' (1999) head rules (:func:`metaeval.metrics.syntactic_heads.to_dependencies`).

    Notes
    -----
    Candidates and references are CoNLL-U / CoNLL-X dependency trees (FORM and HEAD columns are used).
    A chain is the sequence of words on a downward path of the tree, head first; the 1-word chains are
    the words. See the module docstring for the formula.

    References
    ----------
    .. [1] D. Liu and D. Gildea, "Syntactic Features for Evaluation of Machine Translation", ACL-05
       workshop on evaluation measures for MT and/or summarization, 2005.
    """

    name = "hwcm"

    def units(self, text: str, name: str) -> list[Counter]:
        return headword_chains(self.dependencies(text, name), self.depth, lowercase=self.lowercase)


class Dstm(_DependencyOverlap):
    """Dependency subtree metric DSTM (Liu & Gildea 2005): STM over dependency trees labelled by words.

    Parameters
    ----------
    depth : int, default 3
        D, the largest subtree depth (``DEFAULT_DEPTH['dstm']``).
    lowercase : bool, default False
        Lower-case the words before matching.
    trees : {'conll', 'brackets'}, default 'conll'
        The input format, as for :class:`Hwcm`.

    Notes
    -----
    Input as for :class:`Hwcm`. The depth-``n`` subtree at a word is the word with all its dependents
    down to ``n - 1`` levels, so it also matches siblings (``pen -> (a, red)``) that no chain holds.

    References
    ----------
    .. [1] D. Liu and D. Gildea, "Syntactic Features for Evaluation of Machine Translation", ACL-05
       workshop on evaluation measures for MT and/or summarization, 2005.
    """

    name = "dstm"

    def units(self, text: str, name: str) -> list[Counter]:
        return dependency_subtrees(self.dependencies(text, name), self.depth, lowercase=self.lowercase)
