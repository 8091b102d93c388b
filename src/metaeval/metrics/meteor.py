"""METEOR as defined by Banerjee & Lavie (2005): staged unigram alignment, Fmean and a fragmentation penalty.

The candidate and each reference are lower-cased and tokenized, then aligned in stages; every stage maps
only the unigrams that earlier stages left unaligned:

1. ``exact``: identical tokens;
2. ``stem``: identical Porter stems (ROUGE-1.5.5's Porter variant, :func:`.porter155.porter_stem`);
3. ``synonym``: tokens sharing a WordNet synset (after WordNet's morphology, :mod:`.wordnet`).

Within a stage the alignment is a largest set of one-to-one mappings; among largest sets, the one with the
fewest crossings (pairs ``(i, j)``, ``(k, l)`` with ``(i - k)(j - l) < 0``, counted against all mappings
so far) is kept. With ``m`` mappings, ``P = m / |candidate|``, ``R = m / |reference|``,

``Fmean = P R / (alpha P + (1 - alpha) R)`` (``alpha = 0.9``: ``10 P R / (R + 9 P)``),
``Penalty = gamma (chunks / m) ** beta`` (``gamma = 0.5``, ``beta = 3``),
``METEOR = Fmean (1 - Penalty)``,

where ``chunks`` is the fewest groups of mapped unigrams adjacent, and in the same order, in both texts.
With several references the best score is kept. ``m = 0`` gives 0.
"""
from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import ParameterError, check_choice, check_int
from ..signature import Signature
from ._inputs import check_bool, check_pair, warn_degenerate
from .porter155 import porter_stem

__all__ = ["Meteor", "align", "meteor_from_alignment"]

STAGES = ("exact", "stem", "synonym")
TOKENIZERS = ("words", "whitespace")
#: Nodes of the fewest-crossings search per stage before the best alignment found so far is kept.
DEFAULT_MAX_SEARCH_NODES = 100_000
#: Choices of one key's occurrences searched exactly; past it, a reduced set (see ``_reduced_picks``).
_MAX_CLASS_OPTIONS = 256
_WORDS = re.compile(r"\w+(?:['\u2019-]\w+)*|[^\w\s]")


def tokenize(text: str, tokenizer: str = "words", lowercase: bool = True) -> list[str]:
    """METEOR's tokens: ``'words'`` = runs of word characters (inner ``'`` and ``-`` kept) and single
    punctuation marks; ``'whitespace'`` = whitespace-separated tokens."""
    if lowercase:
        text = text.lower()
    return text.split() if tokenizer == "whitespace" else _WORDS.findall(text)


def _max_matching(edges: dict[int, list[int]]) -> int:
    """Size of a maximum bipartite matching (Kuhn's augmenting paths)."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in edges)


def _stage(edges: dict[int, list[int]], fixed: list[tuple[int, int]], max_nodes: int) -> list[tuple[int, int]]:
    """A maximum matching over ``edges`` (any relation) with the fewest crossings (with itself and ``fixed``).

    Depth-first branch and bound over candidate positions in order; used for the synonym stage, whose
    relation is not an equivalence and whose edges are few.
    """
    order = sorted(edges)
    if not order:
        return []
    target = _max_matching(edges)
    fixed_cross = {
        (i, j): sum(1 for a, b in fixed if (a - i) * (b - j) < 0) for i in order for j in edges[i]
    }
    best: list[Any] = [None, math.inf]
    chosen: list[tuple[int, int]] = []
    used: set[int] = set()
    nodes = 0

    def search(k: int, crossings: int) -> None:
        nonlocal nodes
        nodes += 1
        if crossings >= best[1] or (nodes > max_nodes and best[0] is not None):
            return
        if len(chosen) == target:
            best[0], best[1] = list(chosen), crossings
            return
        if len(chosen) + len(order) - k < target:
            return
        i = order[k]
        for j in edges[i]:
            if j in used:
                continue
            added = fixed_cross[(i, j)] + sum(1 for _, b in chosen if b > j)
            chosen.append((i, j))
            used.add(j)
            search(k + 1, crossings + added)
            chosen.pop()
            used.discard(j)
        search(k + 1, crossings)

    search(0, 0)
    return best[0]


def _crossings(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Crossings between mapping sets: ``a (..., k, 2)`` vs ``b (m, 2)`` -> ``(...)``."""
    if a.shape[-2] == 0 or b.shape[0] == 0:
        return np.zeros(a.shape[:-2], dtype=np.int64)
    di = a[..., :, None, 0] - b[None, :, 0]
    dj = a[..., :, None, 1] - b[None, :, 1]
    return ((di * dj) < 0).sum(axis=(-1, -2))


def _class_options(ci: list[int], rj: list[int]) -> np.ndarray:
    """The maximal in-order mappings of one key: ``(options, min(a, b), 2)``."""
    k = min(len(ci), len(rj))
    if len(ci) > len(rj):
        picks = list(itertools.islice(itertools.combinations(ci, k), _MAX_CLASS_OPTIONS + 1))
        if len(picks) > _MAX_CLASS_OPTIONS:
            picks = _reduced_picks(ci, k)
        return np.array([list(zip(p, rj)) for p in picks], dtype=np.int64)
    picks = list(itertools.islice(itertools.combinations(rj, k), _MAX_CLASS_OPTIONS + 1))
    if len(picks) > _MAX_CLASS_OPTIONS:
        picks = _reduced_picks(rj, k)
    return np.array([list(zip(ci, p)) for p in picks], dtype=np.int64)


def _reduced_picks(positions: list[int], k: int) -> list[tuple[int, ...]]:
    """For a key with too many choices: the contiguous runs of ``k`` occurrences, and the evenly spread one."""
    picks = [tuple(positions[s : s + k]) for s in range(len(positions) - k + 1)]
    spread = tuple(positions[round(t * (len(positions) - 1) / max(k - 1, 1))] for t in range(k))
    if len(set(spread)) == k and spread not in picks:
        picks.append(spread)
    return picks


def _key_stage(groups: dict[Any, tuple[list[int], list[int]]], fixed: list[tuple[int, int]],
               max_nodes: int) -> list[tuple[int, int]]:
    """Maximum mapping with the fewest crossings when matching is an equivalence (same key).

    Keys with as many occurrences on both sides are mapped in order (forced); for the other keys, the
    choice of which occurrences of the larger side to map is searched by branch and bound, with the
    crossings written as unary (against forced and earlier mappings) plus pairwise (between keys) terms.
    In-order pairing within a key loses no optimum: for fixed chosen positions it minimizes the crossings
    with every other mapping at once.
    """
    forced: list[tuple[int, int]] = []
    ambiguous: list[np.ndarray] = []
    for ci, rj in groups.values():
        if len(ci) == len(rj):
            forced.extend(zip(ci, rj))
        else:
            ambiguous.append(_class_options(ci, rj))
    if not ambiguous:
        return forced
    base = np.array(fixed + forced, dtype=np.int64).reshape(-1, 2)
    unary = [_crossings(o, base) for o in ambiguous]
    n = len(ambiguous)
    pairwise: dict[tuple[int, int], np.ndarray] = {}
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for a in range(n):
        for b in range(a + 1, n):
            oa, ob = ambiguous[a], ambiguous[b]
            table = np.array([_crossings(oa, ob[q]) for q in range(len(ob))], dtype=np.int64).T
            if table.min() != table.max():  # a constant table does not change the best choice
                pairwise[(a, b)], pairwise[(b, a)] = table, table.T
                neighbours[a].append(b)
                neighbours[b].append(a)
    choice = [0] * n
    seen = [False] * n
    for start in range(n):
        if seen[start]:
            continue
        component, stack = [], [start]
        seen[start] = True
        while stack:
            c = stack.pop()
            component.append(c)
            for d in neighbours[c]:
                if not seen[d]:
                    seen[d] = True
                    stack.append(d)
        component.sort(key=lambda c: (-len(ambiguous[c]), c))
        for c, o in zip(component, _branch_and_bound(component, unary, pairwise, max_nodes)):
            choice[c] = o
    pairs = list(forced)
    for c, o in enumerate(choice):
        pairs.extend((int(i), int(j)) for i, j in ambiguous[c][o])
    return pairs


def _branch_and_bound(classes: list[int], unary: list[np.ndarray], pairwise: dict, max_nodes: int) -> list[int]:
    """Options of ``classes`` minimizing unary + pairwise crossings (depth-first, best-first options,
    bound = sum of the remaining classes' best partial costs); the first best found is kept."""
    if len(classes) == 1:
        return [int(np.argmin(unary[classes[0]]))]
    n = len(classes)
    best: list[Any] = [None, math.inf]
    choice = [0] * n
    nodes = 0

    def search(depth: int, cost: int, acc: list[np.ndarray]) -> None:
        nonlocal nodes
        if depth == n:
            best[0], best[1] = list(choice), cost
            return
        vec = acc[depth]
        rest = sum(int(acc[e].min()) for e in range(depth + 1, n))
        c = classes[depth]
        for o in np.argsort(vec, kind="stable"):
            nodes += 1
            if cost + vec[o] + rest >= best[1] or (nodes > max_nodes and best[0] is not None):
                break
            choice[depth] = int(o)
            updated = acc[: depth + 1]
            for e in range(depth + 1, n):
                table = pairwise.get((classes[e], c))
                updated.append(acc[e] if table is None else acc[e] + table[:, o])
            search(depth + 1, cost + int(vec[o]), updated)

    search(0, 0, [unary[c] for c in classes])
    return best[0]


def align(candidate: Sequence[str], reference: Sequence[str], matchers: Sequence[tuple[str, Callable]],
          *, max_nodes: int = DEFAULT_MAX_SEARCH_NODES) -> list[tuple[int, int]]:
    """Staged METEOR alignment of two token lists: ``(candidate position, reference position)`` pairs.

    ``matchers`` is a sequence of ``(kind, f)``: ``('key', f)`` maps tokens ``a``, ``b`` when
    ``f(a) == f(b)``; ``('sets', f)`` when the sets ``f(a)`` and ``f(b)`` intersect (WordNet synsets).
    """
    pairs: list[tuple[int, int]] = []
    for kind, f in matchers:
        free_c = [i for i in range(len(candidate)) if all(i != a for a, _ in pairs)]
        taken = {b for _, b in pairs}
        free_r = [j for j in range(len(reference)) if j not in taken]
        edges: dict[int, list[int]] = {}
        if kind == "key":
            groups: dict[Any, tuple[list[int], list[int]]] = {}
            for i in free_c:
                groups.setdefault(f(candidate[i]), ([], []))[0].append(i)
            for j in free_r:
                key = f(reference[j])
                if key in groups:
                    groups[key][1].append(j)
            groups = {k: v for k, v in groups.items() if v[1]}
            pairs = pairs + _key_stage(groups, pairs, max_nodes)
            continue
        rsets = {j: f(reference[j]) for j in free_r}
        for i in free_c:
            cset = f(candidate[i])
            js = [j for j in free_r if cset and not cset.isdisjoint(rsets[j])] if cset else []
            if js:
                edges[i] = js
        pairs = pairs + _stage(edges, pairs, max_nodes)
    return sorted(pairs)


def meteor_from_alignment(pairs: Sequence[tuple[int, int]], n_candidate: int, n_reference: int, *,
                          alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5) -> dict[str, float]:
    """Precision, recall, Fmean, chunks, penalty and score of one alignment (sorted by candidate position)."""
    m = len(pairs)
    if m == 0:
        return {"precision": 0.0, "recall": 0.0, "fmean": 0.0, "chunks": 0.0, "penalty": 0.0, "score": 0.0}
    precision, recall = m / n_candidate, m / n_reference
    fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
    chunks = 1 + sum(1 for (a, b), (c, d) in zip(pairs, pairs[1:]) if not (c == a + 1 and d == b + 1))
    penalty = gamma * (chunks / m) ** beta
    return {"precision": precision, "recall": recall, "fmean": fmean, "chunks": float(chunks),
            "penalty": penalty, "score": fmean * (1 - penalty)}


class Meteor:
    """METEOR (Banerjee & Lavie 2005) with exact, Porter-stem and WordNet-synonym stages.

    Parameters
    ----------
    stages : sequence of {'exact', 'stem', 'synonym'}, default all three
        Alignment stages, applied in this order.
    alpha, beta, gamma : float, default 0.9, 3.0, 0.5
        ``Fmean = PR / (alpha P + (1 - alpha) R)``, ``Penalty = gamma (chunks / m) ** beta``
        (Lavie & Agarwal 2007's parametrization; the defaults are the 2005 paper's constants).
    tokenize : {'words', 'whitespace'}, default 'words'
        ``'words'``: word-character runs (inner ``'`` / ``-`` kept) and single punctuation marks;
        ``'whitespace'``: split on whitespace (for pre-tokenized texts).
    lowercase : bool, default True
    wordnet_dir : path or None
        WordNet database directory for the synonym stage; None looks in ``$WNSEARCHDIR`` and
        ``/usr/share/wordnet`` (Debian packages ``wordnet-base``, ``wordnet-sense-index``).
    max_search_nodes : int, default 100000
        Budget of the fewest-crossings search per stage; past it the best alignment found so far (still
        of maximum size) is kept.

    Raises
    ------
    ParameterError
        If an option is invalid.
    MetricResourceError
        If the synonym stage is asked for and no WordNet database is found.

    References
    ----------
    .. [1] S. Banerjee, A. Lavie, "METEOR: An Automatic Metric for MT Evaluation with Improved
       Correlation with Human Judgments", ACL Workshop on Intrinsic and Extrinsic Evaluation Measures, 2005.

    Examples
    --------
    >>> m = Meteor(stages=("exact", "stem"))
    >>> round(m.score("the president spoke to the audience", ["the president then spoke to the audience"])["meteor"], 6)
    0.853462
    """

    name = "meteor"
    scale = "0-1"

    def __init__(
        self,
        *,
        stages: Sequence[str] = STAGES,
        alpha: float = 0.9,
        beta: float = 3.0,
        gamma: float = 0.5,
        tokenize: str = "words",
        lowercase: bool = True,
        wordnet_dir: str | None = None,
        max_search_nodes: int = DEFAULT_MAX_SEARCH_NODES,
    ):
        if isinstance(stages, str) or not isinstance(stages, Sequence) or not stages or any(
            s not in STAGES for s in stages
        ) or len(set(stages)) != len(stages):
            raise ParameterError(
                f"`stages` must be a non-empty sequence of distinct 'exact', 'stem', 'synonym'; got {stages!r}."
            )
        self.stages = tuple(stages)
        self.alpha = _check_unit("alpha", alpha)
        self.beta = _check_nonnegative("beta", beta)
        self.gamma = _check_unit("gamma", gamma)
        self.tokenize = check_choice("tokenize", tokenize, TOKENIZERS)
        self.lowercase = check_bool("lowercase", lowercase)
        self.max_search_nodes = check_int("max_search_nodes", max_search_nodes, minimum=1)
        self.wordnet_dir = None if wordnet_dir is None else str(wordnet_dir)
        self._wordnet = None
        self.wordnet_version = None
        if "synonym" in self.stages:
            self.wordnet_version = self._load_wordnet().version

    def _load_wordnet(self):
        if self._wordnet is None:
            from .wordnet import load_wordnet

            self._wordnet = load_wordnet(self.wordnet_dir)
        return self._wordnet

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_wordnet"] = None  # read again (once per process) where it is used
        return state

    @property
    def signature(self) -> Signature:
        """``metric:meteor|stages:...|alpha|beta|gamma|tokenize|lowercase|stemmer|wordnet|...|scale:0-1``."""
        return Signature.of(
            metric="meteor",
            stages=self.stages,
            alpha=self.alpha,
            beta=self.beta,
            gamma=self.gamma,
            tokenize=self.tokenize,
            lowercase=self.lowercase,
            stemmer="porter-rouge155" if "stem" in self.stages else None,
            wordnet=self.wordnet_version,
            references="best",
            max_search_nodes=self.max_search_nodes,
            scale=self.scale,
        )

    def __repr__(self) -> str:
        return f"Meteor(stages={self.stages!r})"

    def _matchers(self) -> list[tuple[str, Callable]]:
        out: list[tuple[str, Callable]] = []
        for stage in self.stages:
            if stage == "exact":
                out.append(("key", lambda t: t))
            elif stage == "stem":
                out.append(("key", porter_stem))
            else:
                out.append(("sets", self._load_wordnet().synsets))
        return out

    def details(self, candidate: Any, references: Sequence[Any]) -> list[dict[str, Any]]:
        """Per reference: ``precision``, ``recall``, ``fmean``, ``chunks``, ``penalty``, ``score`` and the
        ``alignment`` (candidate position, reference position) pairs."""
        cand, refs = check_pair(candidate, references)
        c_tokens = tokenize(cand, self.tokenize, self.lowercase)
        matchers = self._matchers()
        out = []
        for ref in refs:
            r_tokens = tokenize(ref, self.tokenize, self.lowercase)
            if not c_tokens or not r_tokens:
                warn_degenerate(
                    "`candidate` and `references` must contain tokens for METEOR to be defined; got an empty "
                    "text (scored 0, as no unigram can be mapped)."
                )
            pairs = align(c_tokens, r_tokens, matchers, max_nodes=self.max_search_nodes)
            parts = meteor_from_alignment(pairs, len(c_tokens), len(r_tokens), alpha=self.alpha,
                                          beta=self.beta, gamma=self.gamma)
            parts["alignment"] = pairs
            out.append(parts)
        return out

    def score(self, candidate: Any, references: Sequence[Any]) -> dict[str, float]:
        """METEOR of one candidate: the best score over its references, ``{'meteor': value}``."""
        return {"meteor": max(d["score"] for d in self.details(candidate, references))}


def _check_unit(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ParameterError(f"`{name}` must be a number in [0, 1]; got {value!r}.")
    return float(value)


def _check_nonnegative(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ParameterError(f"`{name}` must be a number >= 0; got {value!r}.")
    return float(value)
