"""Preprocessing and reference lengths for the MT metrics (Leusch, Ueffing, Vilar & Ney 2005).

Leusch et al. show that the steps every MT metric shares -- what a "word" is (tokenization,
punctuation, contractions), case, sentence-boundary words, and which length stands for several
references of different lengths -- move the correlation with human judgments as much as the choice of
the metric itself. This module makes each step an explicit, recorded option of BLEU, NIST, TER, WER and
PER (``docs/mt-preprocessing.md``):

* :class:`MtPreprocessing`, a frozen options object, and :meth:`MtPreprocessing.tokens`, the token list
  of one text: contractions and abbreviations (text level), then the tokenizer, lower-casing, punctuation
  removal and the boundary words ``<s>`` / ``</s>``, in that order;
* :data:`PRESETS` (``'none'``, ``'mteval'``, ``'leusch-baseline'``, ``'leusch-best'``) and
  :func:`resolve_preprocessing`, which turns a preset name, a mapping or an options object into options;
* :func:`reference_length` and :func:`reference_errors`, the reference-length strategies of the paper's
  Section 3.3 for one candidate.

Pure Python; the 'mteval' tokenizer is sacrebleu's ``13a`` (mteval-v13a's rules), imported on first use.

References
----------
.. [1] G. Leusch, N. Ueffing, D. Vilar, H. Ney, "Preprocessing and Normalization for Automatic
   Evaluation of Machine Translation", Proc. ACL-05 Workshop on Intrinsic and Extrinsic Evaluation
   Measures for MT and/or Summarization, 2005, pp. 17-24.
"""
from __future__ import annotations

import math
import re
import string
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any

from ..errors import ParameterError, check_choice, require_module

__all__ = [
    "BOUNDARIES",
    "BOUNDARY_END",
    "BOUNDARY_START",
    "MtPreprocessing",
    "PRESETS",
    "REFERENCE_LENGTHS",
    "TOKENIZERS",
    "expand_contractions",
    "join_abbreviations",
    "reference_errors",
    "reference_length",
    "resolve_preprocessing",
]

#: 'whitespace': the text's own words (the paper's "original candidate"); 'mteval': mteval-v13a's
#: tokenization (sacrebleu's '13a'): punctuation marks are words, except decimal points, thousands
#: commas and hyphens inside words; 'punctuation': every punctuation mark is a word of its own.
TOKENIZERS = ("whitespace", "mteval", "punctuation")
#: Sentence-boundary words: none, ``<s>`` before the segment, ``</s>`` after it, or both.
BOUNDARIES = ("none", "start", "end", "both")
BOUNDARY_START = "<s>"
BOUNDARY_END = "</s>"
#: Reference-length strategies (Section 3.3): 'closest' (the reference length nearest to the candidate's,
#: ties: the shorter; BLEU), 'shortest', 'average' (NIST, TER), 'nearest-to-average' (the reference
#: length nearest to their mean, ties: the shorter), 'average-nearest' (the paper's "average
#: nearest-sentence length": mean length of the references at the smallest distance), 'best' (the
#: length of the reference with the lowest relative error rate, whose distance is then used; WER, PER).
REFERENCE_LENGTHS = ("closest", "shortest", "average", "nearest-to-average", "average-nearest", "best")
#: Strategies that need per-reference distances (edit-distance measures only: WER, PER, TER).
DISTANCE_STRATEGIES = ("average-nearest", "best")

_APOSTROPHE = "['\u2019]"
#: ``X n't`` -> ``X not`` for these auxiliaries; irregular stems are mapped (can't, won't, shan't).
_NOT_STEMS = {
    **{w: w for w in ("do", "does", "did", "is", "are", "was", "were", "has", "have", "had", "would", "could",
                      "should", "must", "need", "might", "dare")},
    "ca": "can", "wo": "will", "sha": "shall",
}
#: ``X 'clitic`` -> ``X expansion`` for these stems only ('s after a noun is a possessive: kept).
_CLITICS = {
    "m": ("am", {"i"}),
    "re": ("are", {"you", "we", "they", "who", "what", "there", "here", "where", "how"}),
    "ve": ("have", {"i", "you", "we", "they", "who", "what", "would", "could", "should", "might", "must"}),
    "ll": ("will", {"i", "you", "he", "she", "it", "we", "they", "that", "there", "who", "what", "this"}),
    "d": ("would", {"i", "you", "he", "she", "it", "we", "they", "that", "there", "who", "what"}),
    "s": ("is", {"it", "he", "she", "that", "there", "here", "what", "where", "who", "how", "let"}),
}
_NOT_RE = re.compile(rf"\b([A-Za-z]+?) ?(n{_APOSTROPHE}t)(?![A-Za-z])", re.IGNORECASE)
_CLITIC_RE = re.compile(rf"\b([A-Za-z]+) ?{_APOSTROPHE}(m|re|ve|ll|d|s)(?![A-Za-z])", re.IGNORECASE)
#: Titles and short forms whose final period is dropped by ``abbreviations=True``.
ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Jr", "Sr", "Gen", "Gov", "Sen", "Rep", "Lt", "Col",
                 "Sgt", "Capt", "Inc", "Corp", "Ltd", "vs", "etc")
_INITIALS_RE = re.compile(r"\b(?:[A-Za-z]\.){2,}")
_TITLE_RE = re.compile(r"\b(" + "|".join(ABBREVIATIONS) + r")\.", re.IGNORECASE)


def _like(word: str, model: str) -> str:
    """``word`` in the case pattern of ``model`` (all capitals, capitalized, or as is)."""
    if model.isupper() and len(model) > 1:
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def expand_contractions(text: str) -> str:
    """English contractions written out: ``don't`` / ``do n't`` -> ``do not``, ``that's`` -> ``that is``.

    Joined (``We'd``) and Penn-Treebank-split (``We 'd``) forms; straight and typographic apostrophes.
    ``n't`` after an auxiliary becomes ``not`` (``can't`` -> ``can not``, ``won't`` -> ``will not``);
    ``'m 're 've 'll 'd 's`` become ``am are have will would is`` after the pronouns and wh-words listed
    in this module (``let's`` -> ``let us``). ``'s`` after any other word (a possessive) and ``'d`` read
    as *had* are left as they are: the list is the decision documented in ``docs/mt-preprocessing.md``.
    The stem keeps its case; the expansion is lower case unless the clitic is written in capitals.
    """
    def not_form(match: re.Match) -> str:
        stem, clitic = match.group(1), match.group(2)
        full = _NOT_STEMS.get(stem.lower())
        if full is None:
            return match.group(0)
        return f"{_like(full, stem)} {'NOT' if clitic.isupper() else 'not'}"

    def clitic_form(match: re.Match) -> str:
        stem, clitic = match.group(1), match.group(2)
        expansion, stems = _CLITICS[clitic.lower()]
        if stem.lower() not in stems:
            return match.group(0)
        if stem.lower() == "let":
            expansion = "us"
        return f"{stem} {expansion.upper() if clitic.isupper() and len(clitic) > 1 else expansion}"

    return _CLITIC_RE.sub(clitic_form, _NOT_RE.sub(not_form, text))


def join_abbreviations(text: str) -> str:
    """Abbreviations kept whole: the periods of initialisms (``U.S.`` -> ``US``, ``e.g.`` -> ``eg``) and
    the final period of the titles in :data:`ABBREVIATIONS` (``Mr.`` -> ``Mr``) are dropped, so that no
    tokenizer splits them into letters and full stops."""
    return _TITLE_RE.sub(r"\1", _INITIALS_RE.sub(lambda m: m.group(0).replace(".", ""), text))


def _is_punctuation(ch: str) -> bool:
    return ch in string.punctuation or unicodedata.category(ch).startswith("P")


@lru_cache(maxsize=1)
def _mteval_tokenizer():
    return require_module("sacrebleu.tokenizers.tokenizer_13a", purpose="the 'mteval' tokenizer").Tokenizer13a()


def _tokenize(text: str, tokenizer: str) -> list[str]:
    if tokenizer == "mteval":
        return _mteval_tokenizer()(text).split()
    if tokenizer == "punctuation":
        text = "".join(f" {ch} " if _is_punctuation(ch) else ch for ch in text)
    return text.split()


@dataclass(frozen=True)
class MtPreprocessing:
    """How an MT metric turns a text into words (Leusch et al. 2005, Sections 3.1, 3.2 and 3.4).

    Parameters
    ----------
    tokenize : {'whitespace', 'mteval', 'punctuation'}, default 'whitespace'
        See :data:`TOKENIZERS`.
    lowercase : bool, default False
        Ignore case (Section 3.2).
    remove_punctuation : bool, default False
        Drop every token made of punctuation marks only (with ``tokenize='punctuation'`` this is the
        paper's "remove punctuation" method of Table 1).
    contractions : bool, default False
        Write out English contractions first (:func:`expand_contractions`).
    abbreviations : bool, default False
        Keep abbreviations whole first (:func:`join_abbreviations`).
    boundaries : {'none', 'start', 'end', 'both'}, default 'none'
        Enclose the segment in the sentence-boundary words ``<s>`` / ``</s>`` (Section 3.4). They are
        context, not words: the metrics leave them out of every length and every unigram count, so they
        act only through n-grams of order 2 and more (BLEU, NIST); WER, PER and TER are unchanged by them.
    """

    tokenize: str = "whitespace"
    lowercase: bool = False
    remove_punctuation: bool = False
    contractions: bool = False
    abbreviations: bool = False
    boundaries: str = "none"

    def __post_init__(self) -> None:
        check_choice("tokenize", self.tokenize, TOKENIZERS)
        check_choice("boundaries", self.boundaries, BOUNDARIES)
        for name in ("lowercase", "remove_punctuation", "contractions", "abbreviations"):
            if not isinstance(getattr(self, name), bool):
                raise ParameterError(f"`{name}` must be True or False; got {getattr(self, name)!r}.")

    @property
    def n_boundaries(self) -> int:
        """Number of boundary words around each segment (0, 1 or 2)."""
        return {"none": 0, "start": 1, "end": 1, "both": 2}[self.boundaries]

    def words(self, text: str) -> list[str]:
        """The words of ``text``: every step except the boundary words."""
        if self.contractions:
            text = expand_contractions(text)
        if self.abbreviations:
            text = join_abbreviations(text)
        tokens = _tokenize(text, self.tokenize)
        if self.lowercase:
            tokens = [t.lower() for t in tokens]
        if self.remove_punctuation:
            tokens = [t for t in tokens if not all(_is_punctuation(ch) for ch in t)]
        return tokens

    def tokens(self, text: str) -> list[str]:
        """The token list of ``text``: :meth:`words` enclosed in the boundary words."""
        words = self.words(text)
        if self.boundaries in ("start", "both"):
            words.insert(0, BOUNDARY_START)
        if self.boundaries in ("end", "both"):
            words.append(BOUNDARY_END)
        return words

    def describe(self) -> str:
        """The options as one signature value, e.g. ``(tok:mteval,lc:yes,punct:keep,...)``."""
        yes = {True: "yes", False: "no"}
        return (f"(tok:{self.tokenize},lc:{yes[self.lowercase]},"
                f"punct:{'remove' if self.remove_punctuation else 'keep'},"
                f"contractions:{yes[self.contractions]},abbreviations:{yes[self.abbreviations]},"
                f"boundaries:{self.boundaries})")


#: Named presets. 'none': the text's own words; 'mteval': mteval-v13a tokenization, case kept;
#: 'leusch-baseline': the paper's baseline (Section 4.2: tokenization with abbreviations and
#: contractions treated, case removed, no boundaries); 'leusch-best': the baseline plus both boundary
#: words, the combination the paper's experiments favour (Sections 4.4-4.6).
PRESETS: Mapping[str, MtPreprocessing] = {
    "none": MtPreprocessing(),
    "mteval": MtPreprocessing(tokenize="mteval"),
    "leusch-baseline": MtPreprocessing(tokenize="mteval", lowercase=True, contractions=True, abbreviations=True),
    "leusch-best": MtPreprocessing(tokenize="mteval", lowercase=True, contractions=True, abbreviations=True,
                                   boundaries="both"),
}
_FIELDS = tuple(f.name for f in fields(MtPreprocessing))


def resolve_preprocessing(value: Any) -> MtPreprocessing | None:
    """Options from ``None`` (the metric's own tokenization), a preset name, an :class:`MtPreprocessing`,
    or a mapping of its fields with an optional ``'preset'`` to start from
    (``{'preset': 'mteval', 'boundaries': 'start'}``)."""
    if value is None or isinstance(value, MtPreprocessing):
        return value
    if isinstance(value, str):
        return PRESETS[check_choice("preprocessing", value, PRESETS)]
    if isinstance(value, Mapping):
        options = dict(value)
        base = options.pop("preset", "none")
        base = PRESETS[check_choice("preprocessing['preset']", base, PRESETS)]
        unknown = sorted(k for k in options if k not in _FIELDS)
        if unknown:
            listed = ", ".join(repr(k) for k in ("preset", *_FIELDS))
            raise ParameterError(f"the keys of `preprocessing` must be among {listed}; got {unknown[0]!r}.")
        return replace(base, **options)
    listed = ", ".join(repr(k) for k in PRESETS)
    raise ParameterError(
        f"`preprocessing` must be None, a preset ({listed}), a mapping of options or an MtPreprocessing; "
        f"got {value!r}."
    )


def _check_lengths(reference_lengths: Sequence[float], distances: Sequence[float] | None, strategy: str) -> None:
    if len(reference_lengths) == 0:
        raise ParameterError(f"`reference_lengths` must hold at least one length; got {reference_lengths!r}.")
    if strategy in DISTANCE_STRATEGIES:
        if distances is None or len(distances) != len(reference_lengths):
            raise ParameterError(
                f"`distances` must give one distance per reference for ref_length={strategy!r}; "
                f"got {distances!r}."
            )


def _rate(distance: float, length: float) -> float:
    return distance / length if length else (math.inf if distance else 0.0)


def reference_length(candidate_length: float, reference_lengths: Sequence[float], strategy: str, *,
                     distances: Sequence[float] | None = None) -> float:
    """The reference length ``I*`` of one candidate of ``candidate_length`` words (Section 3.3).

    Parameters
    ----------
    candidate_length : number
    reference_lengths : sequence of numbers
        One length per reference.
    strategy : {'closest', 'shortest', 'average', 'nearest-to-average', 'average-nearest', 'best'}
        See :data:`REFERENCE_LENGTHS`.
    distances : sequence of numbers, optional
        The candidate's distance to each reference (edit operations), needed by 'average-nearest' and
        'best'.

    Examples
    --------
    >>> reference_length(5, [3, 7, 8], "closest"), reference_length(5, [3, 7, 8], "average")
    (3, 6.0)
    >>> reference_length(5, [3, 7, 8], "nearest-to-average"), reference_length(5, [3, 7, 8], "average-nearest",
    ...                                                                          distances=[2, 1, 1])
    (7, 7.5)
    """
    strategy = check_choice("ref_length", strategy, REFERENCE_LENGTHS)
    _check_lengths(reference_lengths, distances, strategy)
    lengths = list(reference_lengths)
    if strategy == "closest":
        return min(lengths, key=lambda r: (abs(r - candidate_length), r))
    if strategy == "shortest":
        return min(lengths)
    if strategy == "average":
        return sum(lengths) / len(lengths)
    if strategy == "nearest-to-average":
        mean = sum(lengths) / len(lengths)
        return min(lengths, key=lambda r: (abs(r - mean), r))
    if strategy == "average-nearest":
        low = min(distances)
        chosen = [r for r, d in zip(lengths, distances) if d == low]
        return sum(chosen) / len(chosen)
    rates = [_rate(d, r) for d, r in zip(distances, lengths)]
    return lengths[rates.index(min(rates))]  # 'best'; ties: the first reference


def reference_errors(reference_lengths: Sequence[float], distances: Sequence[float], strategy: str) -> float:
    """The error count that goes with :func:`reference_length`: the smallest distance
    (``min_r d(E, E_r)``, the paper's WER numerator), except for 'best', where it is the distance to the
    reference of the lowest relative error rate."""
    strategy = check_choice("ref_length", strategy, REFERENCE_LENGTHS)
    _check_lengths(reference_lengths, distances, "best")
    if strategy != "best":
        return min(distances)
    rates = [_rate(d, r) for d, r in zip(distances, reference_lengths)]
    return distances[rates.index(min(rates))]
