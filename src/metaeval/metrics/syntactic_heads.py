"""Constituency trees to dependency trees by head percolation (Collins 1999), as Liu & Gildea (2005) did.

Liu and Gildea derived the dependency trees of HWCM and DSTM "from the constituent trees by applying the
deterministic headword extraction rules used by the parser of Collins (1999)". :func:`to_dependencies`
does the same for bracketed trees (:mod:`metaeval.metrics.syntactic_trees`): every constituent's
headword is the headword of its head child (:func:`head_child`, table :data:`HEAD_RULES`, with Collins'
special NP rule); the headwords of its other children depend on it.

References
----------
.. [1] M. Collins, "Head-Driven Statistical Models for Natural Language Parsing", PhD thesis, University
   of Pennsylvania, 1999 (appendix A, the head table).
.. [2] D. Liu and D. Gildea, "Syntactic Features for Evaluation of Machine Translation", ACL-05 Workshop
   on Intrinsic and Extrinsic Evaluation Measures for MT and/or Summarization, pp. 25-32, 2005.
"""
from __future__ import annotations

from collections.abc import Sequence

from .syntactic_trees import DependencyTree, Tree

__all__ = ["HEAD_RULES", "PUNCTUATION_TAGS", "head_child", "to_dependencies"]

#: Collins (1999, appendix A) head table: label -> (direction of the search, priority list of child labels).
#: "left": the children are searched left to right for each label in turn, "right": right to left; when no
#: label matches, the first child in that direction is the head. NP has its own rule (:func:`_np_head`).
HEAD_RULES = {
    "ADJP": ("left", "NNS QP NN $ ADVP JJ VBN VBG ADJP JJR NP JJS DT FW RBR RBS SBAR RB"),
    "ADVP": ("right", "RB RBR RBS FW ADVP TO CD JJR JJ IN NP JJS NN"),
    "CONJP": ("right", "CC RB IN"),
    "FRAG": ("right", ""),
    "INTJ": ("left", ""),
    "LST": ("right", "LS :"),
    "NAC": ("left", "NN NNS NNP NNPS NP NAC EX $ CD QP PRP VBG JJ JJS JJR ADJP FW"),
    "PP": ("right", "IN TO VBG VBN RP FW"),
    "PRN": ("left", ""),
    "PRT": ("right", "RP"),
    "QP": ("left", "$ IN NNS NN JJ RB DT CD NCD QP JJR JJS"),
    "RRC": ("right", "VP NP ADVP ADJP PP"),
    "S": ("left", "TO IN VP S SBAR ADJP UCP NP"),
    "SBAR": ("left", "WHNP WHPP WHADVP WHADJP IN DT S SQ SINV SBAR FRAG"),
    "SBARQ": ("left", "SQ S SINV SBARQ FRAG"),
    "SINV": ("left", "VBZ VBD VBP VB MD VP S SINV ADJP NP"),
    "SQ": ("left", "VBZ VBD VBP VB MD VP SQ"),
    "UCP": ("right", ""),
    "VP": ("left", "TO VBD VBN MD VBZ VB VBG VBP VP ADJP NN NNS NP"),
    "WHADJP": ("left", "CC WRB JJ ADJP"),
    "WHADVP": ("right", "CC WRB"),
    "WHNP": ("left", "WDT WP WP$ WHADJP WHPP WHNP"),
    "WHPP": ("right", "IN TO FW"),
}
#: Punctuation tags: never chosen as a head while another child is there.
PUNCTUATION_TAGS = frozenset({".", ",", ":", "``", "''", "-LRB-", "-RRB-", "#", "-NONE-"})


def _base(label: str) -> str:
    """``NP-SBJ-1`` -> ``NP``; ``-LRB-`` and ``-NONE-`` stay whole."""
    if label.startswith("-"):
        return label
    return label.split("-")[0].split("=")[0] or label


def _search(labels: list[str], direction: str, priorities: Sequence[str]) -> int | None:
    order = list(range(len(labels))) if direction == "left" else list(range(len(labels)))[::-1]
    for wanted in priorities:
        for i in order:
            if labels[i] == wanted:
                return i
    return None


def _np_head(labels: list[str]) -> int:
    if labels[-1] == "POS":
        return len(labels) - 1
    for direction, priorities in (("right", ("NN", "NNP", "NNPS", "NNS", "NX", "POS", "JJR")), ("left", ("NP",)),
                                  ("right", ("$", "ADJP", "PRN")), ("right", ("CD",)),
                                  ("right", ("JJ", "JJS", "RB", "QP"))):
        for i in (range(len(labels) - 1, -1, -1) if direction == "right" else range(len(labels))):
            if labels[i] in priorities:
                return i
    return len(labels) - 1


def head_child(label: str, child_labels: Sequence[str]) -> int:
    """Index of the head child of a constituent (Collins 1999 head rules; punctuation is never preferred)."""
    labels = [_base(c) for c in child_labels]
    content = [i for i, c in enumerate(labels) if c not in PUNCTUATION_TAGS] or list(range(len(labels)))
    kept = [labels[i] for i in content]
    base = _base(label)
    if base in ("NP", "NX", "NML"):
        return content[_np_head(kept)]
    direction, priorities = HEAD_RULES.get(base, ("left", ""))
    found = _search(kept, direction, priorities.split())
    if found is None:
        found = 0 if direction == "left" else len(kept) - 1
    return content[found]


def to_dependencies(tree: Tree) -> DependencyTree:
    """The dependency tree of a constituency tree by head percolation (Collins 1999), as Liu & Gildea did.

    Every constituent's headword is its head child's headword; the headwords of the other children depend
    on it. Words are the tree's leaves in order.
    """
    words: list[str] = []
    heads: list[int] = []

    def visit(node: Tree) -> int:  # returns the 1-based index of the node's headword
        label, children = node
        if all(isinstance(c, str) for c in children):
            start = len(words) + 1
            for w in children:
                words.append(w)
                heads.append(0)
            for k in range(start + 1, start + len(children)):  # a multi-word leaf node: the first word heads
                heads[k - 1] = start
            return start
        indices = [visit(c) for c in children]
        h = indices[head_child(label, [c[0] for c in children])]
        for i in indices:
            if i != h:
                heads[i - 1] = h
        return h

    visit(tree)
    return DependencyTree(tuple(words), tuple(heads))
