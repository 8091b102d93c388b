"""Parse trees for the syntactic MT metrics (Liu & Gildea 2005): readers and the counted units.

No parser is bundled: the user brings parses of the candidates and the references.

* **Constituency trees** in Penn Treebank bracketing, ``(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (NN pen))))``:
  a node is ``(LABEL child ...)``, a child is a node or a word. Whitespace, line breaks included, only
  separates tokens, so a tree may span several lines and a text may hold several trees. A root without a
  label, the Treebank's ``( (S ...) )`` wrapper, is dropped when it has one child.
* **Dependency trees** in CoNLL-U or CoNLL-X: one token per line with at least 7 columns (tab-separated,
  or whitespace-separated when the line has no tab), ``ID FORM LEMMA UPOS XPOS FEATS HEAD ...``; a blank
  line ends a sentence; ``#`` comment lines, multiword-token ranges (``1-2``) and empty nodes (``1.1``) are
  skipped. IDs must run 1..n; HEAD is 0 (a root) or the ID of another token; every token must reach a
  root (no cycle). Several roots are accepted (CoNLL-X allows them; they form a forest).

The counted units, each a hashable key:

* :func:`subtrees` (STM): the depth-``n`` subtrees of a constituency tree over its *labels*, words removed
  (a preterminal ``(NN pen)`` is the leaf ``NN``). The depth-``n`` subtree at a node is the node with all
  its descendants down to ``n - 1`` levels below it; it exists when the node has a path of ``n`` labels
  below it and itself (its height is at least ``n``). Depth 1 gives the labels, depth 2 the productions
  ``S -> NP VP``.
* :func:`dependency_subtrees` (DSTM): the same over a dependency tree whose nodes are labelled by words.
* :func:`headword_chains` (HWCM): the paths of ``n`` words going down the dependency tree, head first
  (the paper's Figure 3): in *I have a red pen*, the 2-word chains are *have I*, *have pen*, *pen a*,
  *pen red*.

References
----------
.. [1] D. Liu and D. Gildea, "Syntactic Features for Evaluation of Machine Translation", Proceedings of
   the ACL Workshop on Intrinsic and Extrinsic Evaluation Measures for Machine Translation and/or
   Summarization (ACL-05 workshop), pp. 25-32, 2005.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from ..errors import InputFileError, ParameterError

__all__ = [
    "DependencyTree",
    "MAX_TREE_DEPTH",
    "Tree",
    "dependency_subtrees",
    "headword_chains",
    "parse_brackets",
    "parse_conll",
    "read_brackets",
    "read_conll",
    "subtrees",
]

#: The deepest tree accepted (nesting of brackets, length of a HEAD path): far beyond real parses, and
#: within Python's recursion limit for the recursive unit counting.
MAX_TREE_DEPTH = 300

#: A constituency node: ``(label, children)``; a child is a node or a word (str).
Tree = tuple  # (str, tuple[Union["Tree", str], ...])
Source = Union[str, Path]


class _Malformed(Exception):
    """A syntax problem at a line of the parsed text (turned into a metaeval error by the callers)."""

    def __init__(self, line: int, detail: str):
        super().__init__(detail)
        self.line = line
        self.detail = detail


def _error(name: str, path: Source | None, problem: _Malformed) -> Exception:
    if path is not None:
        return InputFileError(path, problem.detail, row=problem.line)
    return ParameterError(f"`{name}` must be well-formed parse trees; got line {problem.line}: {problem.detail}")


# --------------------------------------------------------------------- constituency trees (brackets)
_TOKEN = re.compile(r"[()]|[^\s()]+")


def _tokens(text: str):
    """``(token, line)`` of a bracketed text: ``(``, ``)`` and atoms."""
    for number, line in enumerate(text.splitlines() or [""], 1):
        for token in _TOKEN.findall(line):
            yield token, number


def _brackets(text: str) -> list[Tree]:
    trees: list[Tree] = []
    stack: list[tuple[str | None, list, int]] = []  # (label, children, line of the "(")
    expect_label = False
    last_line = 1
    for token, line in _tokens(text):
        last_line = line
        if token == "(":
            if len(stack) == MAX_TREE_DEPTH:
                raise _Malformed(line, f"brackets must nest at most {MAX_TREE_DEPTH} deep; got a deeper tree.")
            stack.append((None, [], line))
            expect_label = True
        elif token == ")":
            if not stack:
                raise _Malformed(line, "a ')' closes no open bracket (unbalanced brackets).")
            label, children, opened = stack.pop()
            if not children and label is None:
                raise _Malformed(line, "an empty node '()' has neither a label nor children.")
            if not children:
                raise _Malformed(line, f"the node ({label} ...) has no children (a word or a node).")
            node = _node(label, children, line)
            if stack:
                stack[-1][1].append(node)
            else:
                trees.append(node)
            expect_label = False
        elif expect_label:
            label, children, opened = stack.pop()
            stack.append((token, children, opened))
            expect_label = False
        elif not stack:
            raise _Malformed(line, f"the word {token!r} stands outside any bracket.")
        else:
            stack[-1][1].append(token)
    if stack:
        raise _Malformed(last_line, f"{len(stack)} bracket(s) opened (the last on line {stack[-1][2]}) are never "
                                    "closed (unbalanced brackets).")
    return trees


def _node(label: str | None, children: list, line: int) -> Tree:
    if label is None:
        # "( (S ...) )": the Treebank's unlabelled wrapper; "((S ...))" has its first child as the label slot
        if len(children) == 1 and isinstance(children[0], tuple):
            return children[0]
        raise _Malformed(line, "a node without a label must be the Treebank's wrapper around exactly one tree.")
    if any(isinstance(c, str) for c in children) and any(isinstance(c, tuple) for c in children):
        raise _Malformed(line, f"the node ({label} ...) mixes words and nodes as children.")
    return (label, tuple(children))


def parse_brackets(text: str, *, name: str = "tree") -> list[Tree]:
    """The constituency trees of a bracketed text (one or more trees, any line layout).

    Raises
    ------
    ParameterError
        ``"`name` must be well-formed parse trees; got line L: ..."`` for unbalanced brackets, a word
        outside a bracket, an empty node, a node mixing words and nodes, or a text without a tree.
    """
    if not isinstance(text, str):
        raise ParameterError(f"`{name}` must be a text of bracketed parse trees (str); got {text!r}.")
    try:
        trees = _brackets(text)
    except _Malformed as problem:
        raise _error(name, None, problem) from None
    if not trees:
        raise ParameterError(f"`{name}` must hold at least one bracketed parse tree; got {text[:60]!r}.")
    return trees


def read_brackets(path: Source) -> list[list[Tree]]:
    """The trees of a file holding one bracketed tree per non-blank line (a tree may not span lines).

    Returns one list of trees per non-blank line (usually one tree). Errors are
    :class:`~metaeval.errors.InputFileError` naming the file and the line.
    """
    from ..data.formats import read_text

    out = []
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(_brackets(line))
        except _Malformed as problem:
            raise _error("trees", path, _Malformed(number, problem.detail)) from None
    if not out:
        raise InputFileError(path, "the file must hold at least one bracketed tree; got an empty file.")
    return out


def _height(tree: Tree) -> int:
    children = [c for c in tree[1] if isinstance(c, tuple)]
    return 1 + max((_height(c) for c in children), default=0)


def _label_tree(tree: Tree) -> tuple:
    """The tree over labels only: ``(label, (child label trees...))``; words removed."""
    return (tree[0], tuple(_label_tree(c) for c in tree[1] if isinstance(c, tuple)))


def _truncated(node: tuple, depth: int) -> tuple:
    if depth == 1:
        return (node[0],)
    return (node[0], tuple(_truncated(c, depth - 1) for c in node[1]))


def _count_subtrees(roots: Sequence[tuple], depth: int) -> list[Counter]:
    counts = [Counter() for _ in range(depth)]

    def visit(node: tuple) -> int:
        height = 1 + max((visit(c) for c in node[1]), default=0)
        for n in range(1, min(height, depth) + 1):
            counts[n - 1][_truncated(node, n)] += 1
        return height

    for root in roots:
        visit(root)
    return counts


def subtrees(trees: Sequence[Tree], depth: int) -> list[Counter]:
    """Counts of the depth-``n`` label subtrees of ``trees``, for ``n = 1 .. depth`` (STM's units).

    A key is a nested tuple ``(label,)`` at depth 1 and ``(label, (child keys...))`` deeper.
    """
    return _count_subtrees([_label_tree(t) for t in trees], depth)


# --------------------------------------------------------------------- dependency trees (CoNLL)
@dataclass(frozen=True)
class DependencyTree:
    """One sentence's dependency tree: ``words[i]`` has head ``heads[i]`` (1-based; 0 = a root)."""

    words: tuple[str, ...]
    heads: tuple[int, ...]

    def children(self) -> list[list[int]]:
        """0-based child indices of every token, in sentence order."""
        out: list[list[int]] = [[] for _ in self.words]
        for i, head in enumerate(self.heads):
            if head:
                out[head - 1].append(i)
        return out

    def roots(self) -> list[int]:
        return [i for i, head in enumerate(self.heads) if head == 0]


def _sentence(rows: list[tuple[int, list[str]]]) -> DependencyTree:
    words, heads = [], []
    for expected, (line, columns) in enumerate(rows, 1):
        if columns[0] != str(expected):
            raise _Malformed(line, f"token IDs must run 1, 2, ... within a sentence; got ID {columns[0]!r} where "
                                   f"{expected} was expected.")
        head = columns[6]
        if not head.isdigit():
            raise _Malformed(line, f"HEAD (column 7) must be a token ID or 0; got {head!r}.")
        words.append(columns[1])
        heads.append(int(head))
    n = len(words)
    for (line, _), i, head in zip(rows, range(1, n + 1), heads):
        if head > n:
            raise _Malformed(line, f"HEAD (column 7) must be between 0 and {n} (the sentence's tokens); got {head}.")
        if head == i:
            raise _Malformed(line, f"HEAD (column 7) must not be the token itself; got {head} for token {i}.")
    for (line, _), i in zip(rows, range(1, n + 1)):
        seen, node = set(), i
        while node and node not in seen:
            seen.add(node)
            node = heads[node - 1]
        if node:
            raise _Malformed(line, f"the HEAD links must form a tree; got a cycle through tokens {sorted(seen)}.")
        if len(seen) > MAX_TREE_DEPTH:
            raise _Malformed(line, f"a path from a token to its root must have at most {MAX_TREE_DEPTH} tokens; got "
                                   f"{len(seen)}.")
    return DependencyTree(tuple(words), tuple(heads))


def _conll(text: str, first_line: int = 1) -> list[DependencyTree]:
    sentences, rows = [], []
    for number, line in enumerate(text.splitlines() + [""], first_line):
        if not line.strip():
            if rows:
                sentences.append(_sentence(rows))
                rows = []
            continue
        if line.lstrip().startswith("#"):
            continue
        columns = line.split("\t") if "\t" in line else line.split()
        if len(columns) < 7:
            raise _Malformed(number, f"a token line must have at least 7 columns (ID FORM LEMMA UPOS XPOS FEATS "
                                     f"HEAD); got {len(columns)}.")
        if "-" in columns[0] or "." in columns[0]:
            continue  # multiword token range or empty node (CoNLL-U)
        rows.append((number, [c.strip() for c in columns]))
    return sentences


def parse_conll(text: str, *, name: str = "tree") -> list[DependencyTree]:
    """The dependency trees of a CoNLL-U / CoNLL-X text (sentences separated by blank lines).

    Raises
    ------
    ParameterError
        ``"`name` must be well-formed parse trees; got line L: ..."`` for a line with fewer than 7
        columns, IDs not running 1..n, a HEAD out of range or not a number, a self-loop or a cycle, or a
        text without a token.
    """
    if not isinstance(text, str):
        raise ParameterError(f"`{name}` must be a CoNLL-U / CoNLL-X text (str); got {text!r}.")
    try:
        trees = _conll(text)
    except _Malformed as problem:
        raise _error(name, None, problem) from None
    if not trees:
        raise ParameterError(f"`{name}` must hold at least one CoNLL token line; got {text[:60]!r}.")
    return trees


def read_conll(path: Source) -> list[DependencyTree]:
    """The sentences of a CoNLL-U / CoNLL-X file; errors name the file and the line."""
    from ..data.formats import read_text

    try:
        trees = _conll(read_text(path))
    except _Malformed as problem:
        raise _error("trees", path, problem) from None
    if not trees:
        raise InputFileError(path, "the file must hold at least one CoNLL token line; got none.")
    return trees


def _word_tree(tree: DependencyTree, lowercase: bool) -> list[tuple]:
    children = tree.children()
    words = [w.lower() for w in tree.words] if lowercase else list(tree.words)

    def build(i: int) -> tuple:
        return (words[i], tuple(build(c) for c in children[i]))

    return [build(r) for r in tree.roots()]


def dependency_subtrees(trees: Sequence[DependencyTree], depth: int, *, lowercase: bool = False) -> list[Counter]:
    """Counts of the depth-``n`` subtrees of dependency trees with words as labels (DSTM's units)."""
    return _count_subtrees([root for t in trees for root in _word_tree(t, lowercase)], depth)


def headword_chains(trees: Sequence[DependencyTree], length: int, *, lowercase: bool = False) -> list[Counter]:
    """Counts of the headword chains of ``n`` words, ``n = 1 .. length`` (HWCM's units; Figure 3 of [1]).

    A chain is a tuple of words read down a path of the tree, head first.
    """
    counts = [Counter() for _ in range(length)]
    for tree in trees:
        words = [w.lower() for w in tree.words] if lowercase else list(tree.words)
        children = tree.children()
        # chains[i]: the chains of the current length that start at token i (Figure 3, grown one word a pass)
        chains = [[(w,)] for w in words]
        for n in range(1, length + 1):
            if n > 1:
                chains = [[(words[i],) + c for child in children[i] for c in chains[child]]
                          for i in range(len(words))]
            for per_token in chains:
                counts[n - 1].update(per_token)
    return counts

