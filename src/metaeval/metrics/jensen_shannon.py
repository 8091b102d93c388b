"""JS-2: Jensen-Shannon divergence between the bigram distributions of a summary and its references.

Louis & Nenkova (2013) score a summary by how far its word distribution is from the reference's; REALSumm
(Bhandari et al. 2020) and SummEval (Fabbri et al. 2021) use the bigram version, JS-2, computed by the S3
package (Peyrard et al. 2017, ``JS_eval.py``). :class:`JensenShannon` follows that code step by step:

1. tokens: the runs of word characters (``\\w+``) of every sentence, each stemmed with NLTK's Snowball
   English stemmer (which lower-cases), sentences concatenated (n-grams cross sentence boundaries);
2. n-grams of the token list; for ``n > 1`` those made only of stopwords are dropped, for ``n = 1`` the
   stopword tokens are dropped (NLTK's 179-word English list, compared with the *stemmed* tokens, as S3 does);
3. ``p(g) = count(g) / number of kept n-grams`` for the summary (``P``) and each reference (``Q``);
4. ``JS(P, Q) = (KL(P || M) + KL(Q || M)) / 2`` with ``M = (P + Q) / 2`` and natural logarithms;
5. the mean of ``JS`` over the references.

By default the score is ``-JS`` (``negate=True``), the sign REALSumm stores (higher is better), so it lines
up with the ``js-2`` scores of the packaged REALSumm dataset. ``JS`` lies in ``[0, ln 2]``.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..errors import check_int, require_module
from ..signature import Signature
from ._inputs import check_bool, check_pair, warn_degenerate

__all__ = ["NLTK_ENGLISH_STOPWORDS", "JensenShannon", "js_divergence"]

#: NLTK's English stopword list (179 words, the version used by S3 / REALSumm).
NLTK_ENGLISH_STOPWORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves
    he him his himself she she's her hers herself it it's its itself they them their theirs themselves what
    which who whom this that that'll these those am is are was were be been being have has had having do
    does did doing a an the and but if or because as until while of at by for with about against between
    into through during before after above below to from up down in out on off over under again further
    then once here there when where why how all any both each few more most other some such no nor not only
    own same so than too very s t can will just don don't should should've now d ll m o re ve y ain aren
    aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma
    mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won
    won't wouldn wouldn't""".split()
)
_WORD = re.compile(r"\w+")


def js_divergence(p: dict, q: dict) -> float:
    """Jensen-Shannon divergence (natural log) of two distributions given as ``{event: probability}``."""
    kl_p = kl_q = 0.0
    for event, f in p.items():
        kl_p += f * math.log(f / ((f + q.get(event, 0.0)) / 2.0))
    for event, f in q.items():
        kl_q += f * math.log(f / ((f + p.get(event, 0.0)) / 2.0))
    return (kl_p + kl_q) / 2.0


def _snowball():
    snowball = require_module("nltk.stem.snowball",
                              purpose="JS-2 with stem=True (NLTK's Snowball stemmer, as S3 and REALSumm)")
    return snowball.SnowballStemmer("english")


class JensenShannon:
    """JS-N: Jensen-Shannon divergence of n-gram distributions (S3 / REALSumm / SummEval's JS-2).

    Parameters
    ----------
    n : int, default 2
        n-gram order.
    stem : bool, default True
        Stem with NLTK's Snowball English stemmer (requires ``nltk``); False lower-cases only.
    remove_stopwords : bool, default True
        Drop stopword-only n-grams (for ``n = 1``, stopword tokens).
    negate : bool, default True
        Report ``-JS`` (higher is better, as REALSumm stores it) instead of ``JS``.

    Notes
    -----
    ``JS(P, Q) = 1/2 KL(P || M) + 1/2 KL(Q || M)``, ``M = (P + Q) / 2``, averaged over references; see the
    module docstring for the exact preprocessing. A text with no n-gram left has no distribution: the
    score is NaN with a :class:`~metaeval.errors.DegenerateWarning`.

    References
    ----------
    .. [1] A. Louis, A. Nenkova, "Automatically Assessing Machine Summary Content Without a Gold
       Standard", Computational Linguistics 39(2), 2013.
    .. [2] M. Bhandari et al., "Re-evaluating Evaluation in Text Summarization", EMNLP 2020.
    """

    name = "js-2"
    #: The divergence lies in [0, ln 2] (natural log); negated by default.
    scale = "0-1"

    def __init__(self, *, n: int = 2, stem: bool = True, remove_stopwords: bool = True, negate: bool = True):
        self.n = check_int("n", n, minimum=1)
        self.stem = check_bool("stem", stem)
        self.remove_stopwords = check_bool("remove_stopwords", remove_stopwords)
        self.negate = check_bool("negate", negate)
        self._stemmer = _snowball() if self.stem else None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_stemmer"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._stemmer = _snowball() if self.stem else None

    @property
    def key(self) -> str:
        """The score's name: ``'js-2'`` (``'js-<n>'``)."""
        return f"js-{self.n}"

    @property
    def signature(self) -> Signature:
        return Signature.of(
            metric=self.key,
            tokens="\\w+",
            stemmer="snowball-english-nltk" if self.stem else None,
            stopwords="nltk-english-179" if self.remove_stopwords else None,
            references="mean",
            sign="negated" if self.negate else "divergence",
            scale=self.scale,
        )

    def __repr__(self) -> str:
        return f"JensenShannon(n={self.n}, stem={self.stem}, negate={self.negate})"

    def distribution(self, text: str) -> dict[tuple[str, ...], float]:
        """The n-gram distribution of one text (a str; an empty dict when no n-gram is kept)."""
        words = _WORD.findall(text)
        if self._stemmer is not None:
            words = [self._stemmer.stem(w) for w in words]
        words = [w.lower() for w in words]
        if self.n == 1:
            grams = [(w,) for w in words if not (self.remove_stopwords and w in NLTK_ENGLISH_STOPWORDS)]
        else:
            grams = list(zip(*(words[k:] for k in range(self.n))))
            if self.remove_stopwords:
                grams = [g for g in grams if any(w not in NLTK_ENGLISH_STOPWORDS for w in g)]
        total = len(grams)
        return {g: c / total for g, c in Counter(grams).items()}

    def score(self, candidate: Any, references: Sequence[Any]) -> dict[str, float]:
        """``{'js-2': -JS}`` (or ``JS`` with ``negate=False``), averaged over the references."""
        cand, refs = check_pair(candidate, references)
        p = self.distribution(cand)
        qs = [self.distribution(r) for r in refs]
        if not p or not all(qs):
            warn_degenerate(
                f"`candidate` and `references` must contain {self.key.upper()} n-grams for the divergence to be "
                "defined; got a text without any (score is NaN)."
            )
            return {self.key: math.nan}
        value = sum(js_divergence(p, q) for q in qs) / len(qs)
        return {self.key: -value if self.negate else value}
