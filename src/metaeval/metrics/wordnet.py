"""A small reader of the WordNet database files, enough for METEOR's synonym stage.

Only the index files (``index.noun``, ``index.verb``, ``index.adj``, ``index.adv``) and the morphological
exception lists (``noun.exc``, ``verb.exc``, ``adj.exc``, ``adv.exc``) are read (format: WordNet's
``wndb(5WN)`` manual page). ``index.<pos>`` lines are ``lemma pos synset_cnt p_cnt [ptr_symbol...]
sense_cnt tagsense_cnt synset_offset...``; the last ``synset_cnt`` fields are the byte offsets of the
lemma's synsets in ``data.<pos>``, which identify the synsets. Lines starting with two spaces are the
licence.

:meth:`WordNet.synsets` returns the synsets of every base form of a word, found with WordNet's own
``morphy`` rules (exception list, then the rules of detachment, keeping forms that are in the index), for
every part of speech. Two words are WordNet synonyms when their synset sets intersect.

The database comes from the Debian packages ``wordnet-base`` (and ``wordnet-sense-index``), which put
WordNet 3.0 in ``/usr/share/wordnet``; nothing is downloaded.
"""
from __future__ import annotations

import os
import re
import threading
from pathlib import Path

from .registry import MetricResourceError

__all__ = ["WORDNET_SEARCH_PATH", "WordNet", "find_wordnet", "load_wordnet"]

#: Where :func:`find_wordnet` looks, after the ``WNSEARCHDIR`` environment variable (WordNet's own).
WORDNET_SEARCH_PATH = ("/usr/share/wordnet", "/usr/local/share/wordnet", "/usr/local/WordNet-3.0/dict")
_POS = ("noun", "verb", "adj", "adv")
_REQUIRED = tuple(f"index.{p}" for p in _POS) + tuple(f"{p}.exc" for p in _POS)
#: WordNet's rules of detachment (morph.c), per part of speech: (suffix, ending).
_DETACHMENT = {
    "noun": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
             ("men", "man"), ("ies", "y")),
    "verb": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
             ("ing", "")),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}
_VERSION = re.compile(r"WordNet (\d+(?:\.\d+)*)")
INSTALL_HINT = (
    "install the Debian packages with `apt-get install wordnet-base wordnet-sense-index`, or pass "
    "`wordnet_dir=` (CLI: `--wordnet-dir`) pointing at a WordNet 3.0 `dict` directory"
)


def find_wordnet(directory: str | os.PathLike | None = None) -> Path:
    """The WordNet database directory: ``directory``, else ``$WNSEARCHDIR``, else :data:`WORDNET_SEARCH_PATH`.

    Raises
    ------
    MetricResourceError
        If no directory holding the index and exception files is found (the message says how to install).
    """
    if directory is not None:
        candidates = [Path(directory)]
    else:
        env = os.environ.get("WNSEARCHDIR")
        candidates = ([Path(env)] if env else []) + [Path(p) for p in WORDNET_SEARCH_PATH]
    for path in candidates:
        if all((path / name).is_file() for name in _REQUIRED):
            return path
    looked = ", ".join(str(p) for p in candidates)
    raise MetricResourceError(
        f"METEOR's synonym stage needs the WordNet database (index.noun, noun.exc, ...); none found in {looked}: "
        f"{INSTALL_HINT}; or leave out the synonym stage with `stages=('exact', 'stem')`."
    )


class WordNet:
    """Lemma -> synsets tables and morphological exceptions of one WordNet database directory.

    Parameters
    ----------
    directory : path
        A directory holding ``index.<pos>`` and ``<pos>.exc`` (e.g. ``/usr/share/wordnet``).

    Attributes
    ----------
    directory : Path
    version : str
        The version named in the files' licence header (``'3.0'``), or ``'unknown'``.
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self.version = "unknown"
        self._index: dict[str, dict[str, str]] = {}
        self._exceptions: dict[str, dict[str, tuple[str, ...]]] = {}
        for pos in _POS:
            self._index[pos] = self._read_index(self.directory / f"index.{pos}")
            self._exceptions[pos] = self._read_exceptions(self.directory / f"{pos}.exc")
        self._cache: dict[str, frozenset[int]] = {}

    def _read_index(self, path: Path) -> dict[str, str]:
        """Lemma -> its raw index line (parsed on first use: reading stays fast)."""
        table: dict[str, str] = {}
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  "):
                    if self.version == "unknown":
                        m = _VERSION.search(line)
                        if m:
                            self.version = m.group(1)
                    continue
                table[line[: line.find(" ")]] = line
        return table

    def _offsets(self, pos: str, lemma: str) -> tuple[int, ...]:
        fields = self._index[pos][lemma].split()
        n_synsets = int(fields[2])
        code = _POS.index(pos) * 100_000_000  # synset ids unique across parts of speech
        return tuple(code + int(o) for o in fields[len(fields) - n_synsets:])

    @staticmethod
    def _read_exceptions(path: Path) -> dict[str, tuple[str, ...]]:
        table: dict[str, tuple[str, ...]] = {}
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 2:
                    table[fields[0]] = tuple(fields[1:])
        return table

    def base_forms(self, word: str, pos: str) -> list[str]:
        """WordNet's ``morphy``: the word itself and its base forms that are lemmas of ``pos``."""
        index = self._index[pos]
        forms = [word] if word in index else []
        for base in self._exceptions[pos].get(word, ()):
            if base in index and base not in forms:
                forms.append(base)
        for suffix, ending in _DETACHMENT[pos]:
            if word.endswith(suffix) and len(word) > len(suffix):
                base = word[: len(word) - len(suffix)] + ending
                if base in index and base not in forms:
                    forms.append(base)
        return forms

    def synsets(self, word: str) -> frozenset[int]:
        """Ids of the synsets of every base form of ``word`` (lower-case), over all parts of speech."""
        found = self._cache.get(word)
        if found is None:
            key = word.lower().replace(" ", "_")
            ids: set[int] = set()
            for pos in _POS:
                for form in self.base_forms(key, pos):
                    ids.update(self._offsets(pos, form))
            found = frozenset(ids)
            self._cache[word] = found
        return found

    def are_synonyms(self, a: str, b: str) -> bool:
        """True if ``a`` and ``b`` share a synset."""
        return not self.synsets(a).isdisjoint(self.synsets(b))


_LOADED: dict[Path, WordNet] = {}
_LOCK = threading.Lock()


def load_wordnet(directory: str | os.PathLike | None = None) -> WordNet:
    """The :class:`WordNet` of ``directory`` (see :func:`find_wordnet`), read once per process."""
    path = find_wordnet(directory).resolve()
    with _LOCK:
        wordnet = _LOADED.get(path)
        if wordnet is None:
            wordnet = _LOADED[path] = WordNet(path)
    return wordnet
