"""ROUGE-1.5.5's text processing: lines, length limits, tokenization, stopwords and stemming.

ROUGE-1.5.5 reads each summary as bytes, one sentence per line, and then:

1. lower-cases ASCII letters (``tr/A-Z/a-z/``; other bytes are left alone);
2. applies the length limit (``-l`` words or ``-b`` bytes) to the raw lines, see
   :func:`truncate_words`, :func:`truncate_bytes` and :func:`truncate_bytes_lcs`;
3. replaces every byte other than ``A-Za-z0-9`` by a space (hyphens become tokens of their own
   first, and are then dropped because a token must start with ``[a-z0-9$]``), so a token is a
   maximal run of ASCII letters and digits;
4. removes the SMART stopwords (``-s``);
5. stems (``-m``) tokens longer than 3 characters: the WordNet 2.0 exception table first, then
   ROUGE-1.5.5's Porter variant (:func:`metaeval.metrics.porter155.porter_stem`).

"Whitespace" is Perl's ``\\s`` on bytes: space, tab, newline, carriage return, form feed and
vertical tab; a no-break space (UTF-8 ``c2 a0``) is part of a word, and so is any other non-ASCII
character. Lengths in bytes are lengths of the UTF-8 encoding.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

from .porter155 import porter_stem

__all__ = [
    "RougeTokenizer",
    "exception_table",
    "perl_split",
    "rouge_stem",
    "smart_stopwords",
    "split_lines",
    "truncate_bytes",
    "truncate_bytes_lcs",
    "truncate_words",
]

_WHITESPACE = re.compile(rb"[ \t\n\r\f\x0b]+")
_TOKEN = re.compile(rb"[a-z0-9]+")
_UPPER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
_CACHE_LIMIT = 200_000


@lru_cache(maxsize=1)
def exception_table() -> dict[str, str]:
    """The WordNet 2.0 exception table ROUGE-1.5.5 consults before stemming (5,930 entries).

    Returns
    -------
    dict of str to str
        Inflected form to base form, e.g. ``'children' -> 'child'``, ``'went' -> 'go'``.
    """
    text = resources.files(__package__).joinpath("_data", "wordnet-2.0-exceptions.tsv").read_text("utf-8")
    table = {}
    for line in text.split("\n"):
        if line:
            word, base = line.split("\t")
            table[word] = base
    return table


@lru_cache(maxsize=1)
def smart_stopwords() -> frozenset[str]:
    """The SMART stopword list ROUGE-1.5.5 removes with ``-s`` (598 lines, 596 distinct words).

    Returns
    -------
    frozenset of str
    """
    text = resources.files(__package__).joinpath("_data", "smart_common_words.txt").read_text("utf-8")
    return frozenset(line for line in text.split("\n") if line)


_STEMS: dict[str, str] = {}


def rouge_stem(token: str) -> str:
    """Stem one lower-case token as ROUGE-1.5.5 does with ``-m``.

    Tokens of at most 3 characters are kept; longer ones are looked up in the WordNet 2.0 exception
    table, and stemmed with ROUGE-1.5.5's Porter variant when absent. Results are cached.

    Parameters
    ----------
    token : str
        A token made of lower-case ASCII letters and digits.

    Returns
    -------
    str

    Examples
    --------
    >>> rouge_stem("children"), rouge_stem("running"), rouge_stem("was")
    ('child', 'run', 'was')
    """
    stem = _STEMS.get(token)
    if stem is None:
        if len(token) > 3:
            stem = exception_table().get(token) or porter_stem(token)
        else:
            stem = token
        if len(_STEMS) >= _CACHE_LIMIT:
            _STEMS.clear()
        _STEMS[token] = stem
    return stem


def split_lines(text: str | Sequence[str]) -> list[bytes]:
    """The lines ROUGE-1.5.5 would read from a summary file, as UTF-8 bytes.

    Parameters
    ----------
    text : str or sequence of str
        A text with one sentence per line, or a list of sentences. A sentence containing newlines
        is several lines, as it would be in a file.

    Returns
    -------
    list of bytes
        The non-empty lines, not stripped (ROUGE-1.5.5 only removes the newline), ASCII letters
        lower-cased.
    """
    parts = text.split("\n") if isinstance(text, str) else [p for s in text for p in s.split("\n")]
    return [p.encode("utf-8").translate(_UPPER) for p in parts if p]


def perl_split(line: bytes) -> list[bytes]:
    """Split on whitespace as Perl's ``split(/\\s+/, $line)``.

    A leading empty field is kept when the line starts with whitespace (and counts as a word for
    ``-l``); trailing empty fields are dropped.

    Parameters
    ----------
    line : bytes

    Returns
    -------
    list of bytes
    """
    fields = _WHITESPACE.split(line)
    while fields and not fields[-1]:
        fields.pop()
    return fields


def truncate_words(lines: list[bytes], limit: int) -> list[bytes]:
    """Keep the first ``limit`` words (``-l``), counted on the raw lines.

    A line whose words still fit (strictly fewer than ``limit`` in total) is kept whole; the line
    reaching the limit is cut to the remaining words and reading stops. Both of ROUGE-1.5.5's
    readers (n-grams and LCS) do this.

    Parameters
    ----------
    lines : list of bytes
        Output of :func:`split_lines`.
    limit : int
        Positive number of words.

    Returns
    -------
    list of bytes
    """
    out: list[bytes] = []
    used = 0
    for line in lines:
        words = perl_split(line)
        if used + len(words) < limit:
            used += len(words)
            out.append(line)
        else:
            out.append(b" ".join(words[: limit - used]))
            break
    return out


def truncate_bytes(lines: list[bytes], limit: int) -> list[bytes]:
    """Keep the first ``limit`` bytes (``-b``) as ROUGE-1.5.5's n-gram reader does.

    Line lengths are summed without the separators between lines; the line reaching the limit is
    cut to the remaining bytes and reading stops. ROUGE-N, ROUGE-S/SU, the clipping counts of
    ROUGE-L/W and the peer (candidate) totals of ROUGE-L/W come from this reader.

    Parameters
    ----------
    lines : list of bytes
    limit : int
        Positive number of bytes.

    Returns
    -------
    list of bytes
    """
    out: list[bytes] = []
    used = 0
    for line in lines:
        if used + len(line) < limit:
            used += len(line)
            out.append(line)
        else:
            out.append(line[: limit - used])
            break
    return out


def truncate_bytes_lcs(lines: list[bytes], limit: int) -> list[bytes]:
    """Apply ``-b`` as ROUGE-1.5.5's LCS reader does (sentences for ROUGE-L and ROUGE-W).

    That reader never adds up the lengths of the lines it keeps: every line shorter than ``limit``
    bytes is kept whole, and the first line of at least ``limit`` bytes is cut to ``limit`` bytes
    and ends the text. The model (reference) totals of ROUGE-L/W therefore come from longer texts
    than the other counts; this reproduces ROUGE-1.5.5 as published.

    Parameters
    ----------
    lines : list of bytes
    limit : int
        Positive number of bytes.

    Returns
    -------
    list of bytes
    """
    out: list[bytes] = []
    for line in lines:
        if len(line) < limit:
            out.append(line)
        else:
            out.append(line[:limit])
            break
    return out


class RougeTokenizer:
    """Turn lines into ROUGE-1.5.5 tokens, with stopword removal and stemming, cached per line.

    Parameters
    ----------
    stem : bool
        ``-m``: stem tokens longer than 3 characters (:func:`rouge_stem`).
    remove_stopwords : bool
        ``-s``: drop the SMART stopwords (before stemming).
    """

    def __init__(self, *, stem: bool, remove_stopwords: bool):
        self.stem = stem
        self.remove_stopwords = remove_stopwords
        self._lines: dict[bytes, tuple[str, ...]] = {}

    def tokens(self, line: bytes) -> tuple[str, ...]:
        """The tokens of one line.

        Parameters
        ----------
        line : bytes
            A line as returned by :func:`split_lines` (ASCII letters are lower-cased again here).

        Returns
        -------
        tuple of str
        """
        cached = self._lines.get(line)
        if cached is not None:
            return cached
        words = [w.decode("ascii") for w in _TOKEN.findall(line.translate(_UPPER))]
        if self.remove_stopwords:
            stop = smart_stopwords()
            words = [w for w in words if w not in stop]
        if self.stem:
            words = [rouge_stem(w) for w in words]
        result = tuple(words)
        if len(self._lines) >= _CACHE_LIMIT:
            self._lines.clear()
        self._lines[line] = result
        return result
