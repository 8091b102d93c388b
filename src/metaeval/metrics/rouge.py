"""ROUGE, exactly as ROUGE-1.5.5 (the Perl script) computes it, in pure Python.

:class:`Rouge` reproduces ROUGE-1.5.5's per-evaluation scores (``-d``): its tokenization, length
limits, stopwords, stemmer, ROUGE-N, summary-level ROUGE-L, ROUGE-W, ROUGE-S/SU and both
multi-reference formulas, including the script's quirks (see :mod:`.rouge_tokenize`,
:mod:`.rouge_lcs` and :mod:`.rouge_counts`). Per-candidate sufficient statistics
(:meth:`Rouge.statistics`) allow corpus-level aggregation (:meth:`Rouge.corpus_score`).
"""
from __future__ import annotations

import warnings
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Any

from ..errors import DegenerateWarning, ParameterError, check_choice, check_int
from ..signature import Signature
from .rouge_counts import RougeCounts, RougeStatistics, aggregate, round5, scores_from_counts
from .rouge_flags import flags_from_options, options_from_flags
from .rouge_lcs import PeerSentence, lcs_hits, wlcs_hits
from .rouge_tokenize import RougeTokenizer, split_lines, truncate_bytes, truncate_bytes_lcs, truncate_words

__all__ = ["Rouge"]

#: Defaults of :class:`Rouge` (ROUGE-1, ROUGE-2 and ROUGE-L, as ``-n 2 -f A -p 0.5 -t 0``).
DEFAULT_N = 2
DEFAULT_ALPHA = 0.5
MULTI_REFERENCE_CHOICES = ("average", "best")
COUNTING_UNIT_CHOICES = ("sentence", "token")
ROUNDING_CHOICES = ("none", "rouge155")
_TEXT_CACHE_SIZE = 4096


class _Text:
    """One summary as ROUGE-1.5.5's readers see it, with lazily built counts."""

    __slots__ = ("tokens", "sentences", "_unigrams", "_ngrams", "_skip", "_peer")

    def __init__(self, tokens: tuple[str, ...], sentences: tuple[tuple[str, ...], ...]):
        self.tokens = tokens  # n-gram reader: all tokens
        self.sentences = sentences  # LCS reader: tokens per sentence
        self._unigrams: Counter | None = None
        self._ngrams: dict[int, Counter] = {}
        self._skip: dict[tuple[int, bool], Counter] = {}
        self._peer: list[PeerSentence] | None = None

    def unigrams(self) -> Counter:
        if self._unigrams is None:
            self._unigrams = Counter(self.tokens)
        return self._unigrams

    def ngrams(self, n: int) -> Counter:
        grams = self._ngrams.get(n)
        if grams is None:
            t = self.tokens
            grams = self.unigrams() if n == 1 else Counter(zip(*(t[k:] for k in range(n))))
            self._ngrams[n] = grams
        return grams

    def skip_bigrams(self, distance: int, unigrams: bool) -> Counter:
        grams = self._skip.get((distance, unigrams))
        if grams is None:
            t = self.tokens
            grams = Counter()
            # ROUGE-1.5.5 starts a pair (and, with -u, a unigram) at every token but the last.
            for i in range(len(t) - 1):
                if unigrams:
                    grams[(t[i],)] += 1
                stop = len(t) if distance < 0 else min(len(t), i + distance + 2)
                for j in range(i + 1, stop):
                    grams[(t[i], t[j])] += 1
            self._skip[(distance, unigrams)] = grams
        return grams

    def peer_sentences(self) -> list[PeerSentence]:
        if self._peer is None:
            self._peer = [PeerSentence(s) for s in self.sentences]
        return self._peer


def _overlap(model: Counter, peer: Counter) -> int:
    if len(peer) < len(model):
        return sum(min(c, model[g]) for g, c in peer.items() if g in model)
    return sum(min(c, peer[g]) for g, c in model.items() if g in peer)


def _as_text(name: str, value: Any) -> str | list[str]:
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence) and all(isinstance(s, str) for s in value):
        return list(value)
    raise ParameterError(f"`{name}` must be a text or a list of sentences (str); got {value!r}.")


class Rouge:
    """ROUGE-1.5.5 scorer.

    Parameters
    ----------
    n : int, default 2
        ROUGE-N for N = 1 ... ``n`` (``-n``); 0 for none.
    stem : bool, default False
        ``-m``: stem tokens longer than 3 characters (WordNet 2.0 exceptions, then ROUGE-1.5.5's
        Porter variant).
    remove_stopwords : bool, default False
        ``-s``: remove the SMART stopwords.
    word_limit, byte_limit : int or None
        ``-l`` / ``-b``: keep only the first words / bytes of every summary (at most one).
    lcs : bool, default True
        ROUGE-L, the summary-level union LCS over sentences (``-x`` turns it off).
    weight : float or None
        ``-w``: ROUGE-W with this weight (typically 1.2).
    skip_distance : int or None
        ``-2``: ROUGE-S with at most this many words between the two words of a pair (< 0: any).
    skip_unigrams : bool or 'both', default False
        ``-u``: ROUGE-SU (unigrams counted too); ``'both'`` (``-U``): ROUGE-S and ROUGE-SU.
    multi_reference : {'average', 'best'}, default 'average'
        ``-f A``: pool the totals of all references; ``-f B``: keep the best reference's.
    alpha : float, default 0.5
        ``-p``: van Rijsbergen's alpha, ``F = 1 / (alpha / P + (1 - alpha) / R)``: 1 gives precision,
        0 recall, 0.5 their harmonic mean.
    counting_unit : {'sentence', 'token'}, default 'sentence'
        ``-t 0`` / ``-t 1``: how :meth:`corpus_score` averages (per candidate / pooled totals).
    rounding : {'none', 'rouge155'}, default 'none'
        ``'rouge155'`` reproduces ROUGE-1.5.5's printed numbers: recall and precision rounded to 5
        decimals and F computed from them; ``'none'`` keeps full precision (no artificial ties).

    Raises
    ------
    ParameterError
        If an option is invalid.

    Notes
    -----
    Scores of a candidate against its references follow :mod:`.rouge_counts`: with totals ``M``
    (references), ``P`` (candidate) and ``H`` (hits), ``recall = H / M``, ``precision = H / P`` and
    ``F = P R / ((1 - alpha) P + alpha R)`` (ROUGE-W: ``(H / M) ** (1 / w)``, ...).

    ROUGE-1.5.5's own behaviour is kept where it surprises: n-grams and skip-bigrams run across
    sentence boundaries; with ``-u`` the last token's unigram is not counted; ROUGE-L/W hits are
    clipped by unigram counts; with ``-b`` the sentences of ROUGE-L/W (and their model totals) come
    from a reader that keeps every sentence shorter than the limit, while peer totals and clipping
    counts come from the truncated text; the ROUGE-W model total is ``f(sum_i f(len r_i))``;
    ``-f B`` keeps the first reference with the highest recall, rounded to 5 decimals for
    ROUGE-N/S. The test suite checks all of it against the script's outputs.

    References
    ----------
    .. [1] C.-Y. Lin, "ROUGE: A Package for Automatic Evaluation of Summaries", Text Summarization
       Branches Out (ACL workshop), 2004.

    Examples
    --------
    >>> rouge = Rouge.from_flags("-n 2 -m")
    >>> rouge.flags
    '-n 2 -m -f A -p 0.5 -t 0'
    >>> s = rouge.score(["The cats sat on the mat ."], [["A cat sat on a mat ."]])
    >>> round(s["rouge-1"]["recall"], 5), round(s["rouge-2"]["f1"], 5)
    (0.66667, 0.4)
    """

    #: Recall, precision and F as fractions (the packaged SummEval dataset stores them x100).
    scale = "0-1"

    def __init__(
        self,
        *,
        n: int = DEFAULT_N,
        stem: bool = False,
        remove_stopwords: bool = False,
        word_limit: int | None = None,
        byte_limit: int | None = None,
        lcs: bool = True,
        weight: float | None = None,
        skip_distance: int | None = None,
        skip_unigrams: bool | str = False,
        multi_reference: str = "average",
        alpha: float = DEFAULT_ALPHA,
        counting_unit: str = "sentence",
        rounding: str = "none",
    ):
        self.n = check_int("n", n, minimum=0)
        self.stem = _check_bool("stem", stem)
        self.remove_stopwords = _check_bool("remove_stopwords", remove_stopwords)
        self.word_limit = None if word_limit is None else check_int("word_limit", word_limit, minimum=1)
        self.byte_limit = None if byte_limit is None else check_int("byte_limit", byte_limit, minimum=1)
        if self.word_limit is not None and self.byte_limit is not None:
            raise ParameterError(f"`byte_limit` must be None when `word_limit` is set; got {byte_limit!r}.")
        self.lcs = _check_bool("lcs", lcs)
        self.weight = None if weight is None else _check_positive("weight", weight)
        self.skip_distance = None if skip_distance is None else _check_integer("skip_distance", skip_distance)
        if skip_unigrams not in (False, True, "both") or not isinstance(skip_unigrams, (bool, str)):
            raise ParameterError(f"`skip_unigrams` must be one of False, True, 'both'; got {skip_unigrams!r}.")
        if skip_unigrams is not False and self.skip_distance is None:
            raise ParameterError(f"`skip_distance` must be set when `skip_unigrams` is used; got {skip_distance!r}.")
        self.skip_unigrams = skip_unigrams
        self.multi_reference = check_choice("multi_reference", multi_reference, MULTI_REFERENCE_CHOICES)
        self.alpha = _check_alpha(alpha)
        self.counting_unit = check_choice("counting_unit", counting_unit, COUNTING_UNIT_CHOICES)
        self.rounding = check_choice("rounding", rounding, ROUNDING_CHOICES)
        if not (self.n or self.lcs or self.weight is not None or self.skip_distance is not None):
            raise ParameterError(f"`n` must be >= 1 when ROUGE-L, ROUGE-W and ROUGE-S are off; got {n!r}.")
        self._tokenizer = RougeTokenizer(stem=self.stem, remove_stopwords=self.remove_stopwords)
        self._texts: OrderedDict[tuple[bytes, ...], _Text] = OrderedDict()

    @classmethod
    def from_flags(cls, flags: str | Sequence[str], **overrides: Any) -> "Rouge":
        """A scorer from ROUGE-1.5.5 command-line flags (see :mod:`.rouge_flags`).

        Parameters
        ----------
        flags : str or sequence of str
            E.g. ``"-n 2 -m -s -l 100"``. Without ``-n`` no ROUGE-N is computed, as in ROUGE-1.5.5.
        **overrides
            Keyword options applied after the flags (e.g. ``rounding='rouge155'``).

        Returns
        -------
        Rouge
        """
        options = options_from_flags(flags)
        options.update(overrides)
        return cls(**options)

    @property
    def flags(self) -> str:
        """The equivalent ROUGE-1.5.5 flags (``-f``, ``-p`` and ``-t`` always written)."""
        return flags_from_options(
            n=self.n,
            stem=self.stem,
            remove_stopwords=self.remove_stopwords,
            word_limit=self.word_limit,
            byte_limit=self.byte_limit,
            lcs=self.lcs,
            weight=self.weight,
            skip_distance=self.skip_distance,
            skip_unigrams=self.skip_unigrams,
            multi_reference=self.multi_reference,
            alpha=self.alpha,
            counting_unit=self.counting_unit,
        )

    @property
    def signature(self) -> Signature:
        """Reproducibility signature: ``metric:rouge-1.5.5|flags:<flags>|rounding:<r>|scale:0-1|version:<v>``."""
        return Signature.of(metric="rouge-1.5.5", flags=self.flags, rounding=self.rounding, scale=self.scale)

    @property
    def measures(self) -> list[str]:
        """Names of the measures computed, in ROUGE-1.5.5's order."""
        names = [f"rouge-{k}" for k in range(1, self.n + 1)]
        if self.lcs:
            names.append("rouge-l")
        if self.weight is not None:
            names.append(f"rouge-w-{self.weight:g}")
        if self.skip_distance is not None:
            d = "*" if self.skip_distance < 0 else str(self.skip_distance)
            if self.skip_unigrams in (False, "both"):
                names.append(f"rouge-s{d}")
            if self.skip_unigrams in (True, "both"):
                names.append(f"rouge-su{d}")
        return names

    def __repr__(self) -> str:
        return f"Rouge.from_flags({self.flags!r}, rounding={self.rounding!r})"

    # ------------------------------------------------------------------ reading
    def _text(self, text: str | list[str]) -> _Text:
        lines = tuple(split_lines(text))
        cached = self._texts.get(lines)
        if cached is not None:
            self._texts.move_to_end(lines)
            return cached
        ngram_lines: Sequence[bytes] = lines
        lcs_lines: Sequence[bytes] = lines
        if self.word_limit is not None:
            ngram_lines = lcs_lines = truncate_words(list(lines), self.word_limit)
        elif self.byte_limit is not None:
            ngram_lines = truncate_bytes(list(lines), self.byte_limit)
            lcs_lines = truncate_bytes_lcs(list(lines), self.byte_limit)
        tokenize = self._tokenizer.tokens
        ngram_sentences = [tokenize(line) for line in ngram_lines]
        lcs_sentences = ngram_sentences if lcs_lines is ngram_lines else [tokenize(line) for line in lcs_lines]
        result = _Text(tuple(t for s in ngram_sentences for t in s), tuple(lcs_sentences))
        self._texts[lines] = result
        if len(self._texts) > _TEXT_CACHE_SIZE:
            self._texts.popitem(last=False)
        return result

    # ------------------------------------------------------------------ scoring
    def _score_iv(self, candidate: Any, references: Any) -> tuple[str | list[str], list[str | list[str]]]:
        cand = _as_text("candidate", candidate)
        if isinstance(references, str) or not isinstance(references, Sequence) or len(references) == 0:
            raise ParameterError(
                f"`references` must be a non-empty list of references (each a text or a list of sentences); got {references!r}."
            )
        return cand, [_as_text("references", r) for r in references]

    def _per_reference(self, peer: _Text, model: _Text) -> dict[str, tuple[RougeCounts, float]]:
        """Totals of each measure against one reference, with ROUGE-1.5.5's -f B selection score."""
        out: dict[str, tuple[RougeCounts, float]] = {}
        for k in range(1, self.n + 1):
            m_count = max(len(model.tokens) - k + 1, 0)
            hit = _overlap(model.ngrams(k), peer.ngrams(k)) if m_count else 0
            counts = RougeCounts(hit, m_count, max(len(peer.tokens) - k + 1, 0))
            out[f"rouge-{k}"] = (counts, round5(hit / m_count) if m_count else 0.0)
        if self.lcs:
            hit = lcs_hits(model.sentences, peer.peer_sentences(), model.unigrams().copy(), peer.unigrams().copy())
            base = sum(len(s) for s in model.sentences)
            out["rouge-l"] = (RougeCounts(hit, base, len(peer.tokens)), hit / base if base else 0.0)
        if self.weight is not None:
            w = self.weight
            hit, base = wlcs_hits(model.sentences, peer.sentences, w, model.unigrams().copy(), peer.unigrams().copy())
            # ROUGE-1.5.5 divides by a zero base (and dies); 0 is used for -f B here.
            best = (hit / base) ** (1.0 / w) if base else 0.0
            out[f"rouge-w-{w:g}"] = (RougeCounts(hit, base**w, len(peer.tokens) ** w, w), best)
        if self.skip_distance is not None:
            d = "*" if self.skip_distance < 0 else str(self.skip_distance)
            variants = {False: [False], True: [True], "both": [False, True]}[self.skip_unigrams]
            for unigrams in variants:
                m_grams = model.skip_bigrams(self.skip_distance, unigrams)
                p_grams = peer.skip_bigrams(self.skip_distance, unigrams)
                m_count, p_count = sum(m_grams.values()), sum(p_grams.values())
                hit = _overlap(m_grams, p_grams)
                name = f"rouge-su{d}" if unigrams else f"rouge-s{d}"
                out[name] = (RougeCounts(hit, m_count, p_count), round5(hit / m_count) if m_count else 0.0)
        return out

    def statistics(self, candidate: str | Sequence[str], references: Sequence[str | Sequence[str]]) -> RougeStatistics:
        """Per-candidate sufficient statistics (what ROUGE-1.5.5 prints with ``-t 1``).

        Parameters
        ----------
        candidate : str or sequence of str
            The candidate (peer) summary: a text with one sentence per line, or a list of sentences.
        references : sequence of (str or sequence of str)
            The reference (model) summaries, each like ``candidate``.

        Returns
        -------
        RougeStatistics
            Totals per measure, pooled over the references (``'average'``) or of the first best
            reference (``'best'``, chosen as ROUGE-1.5.5 does on its rounded recall for ROUGE-N/S and
            unrounded recall for ROUGE-L/W).

        Warns
        -----
        DegenerateWarning
            If the candidate or a reference has no tokens (ROUGE-1.5.5 then reports 0).
        """
        cand, refs = self._score_iv(candidate, references)
        peer = self._text(cand)
        models = [self._text(r) for r in refs]
        if not peer.tokens or not all(m.tokens for m in models):
            warnings.warn(
                "`candidate` and `references` must contain tokens for ROUGE to be defined; got an empty "
                "text (ROUGE-1.5.5 reports 0, and so does metaeval).",
                DegenerateWarning,
                stacklevel=2,
            )
        per_model = [self._per_reference(peer, m) for m in models]
        totals: dict[str, RougeCounts] = {}
        for name in per_model[0]:
            if self.multi_reference == "average":
                total = per_model[0][name][0]
                for result in per_model[1:]:
                    total = total + result[name][0]
                totals[name] = total
            else:
                best_score = -1.0
                for result in per_model:
                    counts, score = result[name]
                    if score > best_score:
                        best_score, totals[name] = score, counts
        return RougeStatistics(totals)

    def scores(self, statistics: RougeStatistics) -> dict[str, dict[str, float]]:
        """Recall, precision and F of every measure from one candidate's statistics.

        Parameters
        ----------
        statistics : RougeStatistics

        Returns
        -------
        dict
            Measure name to ``{'recall', 'precision', 'f1'}``.
        """
        rounded = self.rounding == "rouge155"
        return {
            name: scores_from_counts(c, alpha=self.alpha, rouge155_rounding=rounded)
            for name, c in statistics.counts.items()
        }

    def score(self, candidate: str | Sequence[str], references: Sequence[str | Sequence[str]]) -> dict[str, dict[str, float]]:
        """ROUGE of one candidate against its references.

        Parameters
        ----------
        candidate : str or sequence of str
            A text with one sentence per line, or a list of sentences.
        references : sequence of (str or sequence of str)
            One or more references, each like ``candidate``.

        Returns
        -------
        dict
            ``{'rouge-1': {'recall', 'precision', 'f1'}, ..., 'rouge-l': ..., 'rouge-w-1.2': ...,
            'rouge-su4': ...}`` for the measures configured (see :attr:`measures`).

        Raises
        ------
        ParameterError
            If ``candidate`` or ``references`` is malformed.
        """
        return self.scores(self.statistics(candidate, references))

    def corpus_score(self, statistics: Sequence[RougeStatistics]) -> dict[str, dict[str, float]]:
        """Corpus-level ROUGE of many candidates, averaged by :attr:`counting_unit`.

        Parameters
        ----------
        statistics : sequence of RougeStatistics
            From :meth:`statistics` of this scorer (or one with the same flags).

        Returns
        -------
        dict
            Measure name to ``{'recall', 'precision', 'f1'}``; see
            :func:`metaeval.metrics.rouge_counts.aggregate` for the formulas.
        """
        if isinstance(statistics, RougeStatistics) or len(statistics) == 0:
            raise ParameterError(f"`statistics` must be a non-empty list of RougeStatistics; got {statistics!r}.")
        return aggregate(
            list(statistics),
            counting_unit=self.counting_unit,
            alpha=self.alpha,
            rouge155_rounding=self.rounding == "rouge155",
        )


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ParameterError(f"`{name}` must be True or False; got {value!r}.")
    return value


def _check_integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(f"`{name}` must be an integer; got {value!r}.")
    return value


def _check_positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ParameterError(f"`{name}` must be a number > 0; got {value!r}.")
    return float(value)


def _check_alpha(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ParameterError(f"`alpha` must be a number in [0, 1]; got {value!r}.")
    return float(value)
