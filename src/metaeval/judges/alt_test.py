"""The Alternative Annotator Test (alt-test) of Calderon, Reichart & Dror (ACL 2025).

Can a judge replace the human annotators? The test leaves each annotator out in turn and asks who
represents the remaining annotators better on the instances they share: the judge or the left-out human.

Instances are keys (an input and an unordered pair of systems, :mod:`metaeval.judges.agreement`); an
annotator's (or the judge's) annotation of a key is the vote of its comparisons of that key. On numeric
ratings (a ScoreSet, :class:`RatingTable`) an instance is one output (a system's on an input), rated as it is:
no pairs are formed, so items rated by several annotators (one system) are tested directly. For each
human annotator j, on the instances I_j annotated by j, by the judge and by at least one other human:

- alignment with the others (accuracy, for categorical verdicts): ``S(a, i) = mean_{h != j} 1{a_i = h_i}``
  over the other annotators h of instance i, for ``a`` the judge f and the left-out annotator h_j;
- indicators ``W^f_i = 1{S(f, i) >= S(h_j, i)}`` and ``W^h_i = 1{S(h_j, i) >= S(f, i)}``; advantage
  probabilities ``rho^f_j = mean_i W^f_i`` and ``rho^h_j = mean_i W^h_i``;
- the one-sided paired t-test of ``H0: rho^h_j - rho^f_j >= epsilon`` against ``H1: rho^h_j - rho^f_j <
  epsilon`` on ``d_i = W^h_i - W^f_i``: ``t = (mean d - epsilon) / (sd(d) / sqrt(n))``, ``p = F_{n-1}(t)``
  (when every ``d_i`` is equal, p is 0 if ``mean d < epsilon`` and 1 otherwise);
- the Benjamini-Yekutieli correction (FDR under any dependence) over the m annotators' p-values.

The winning rate ``omega`` is the share of annotators whose null hypothesis is rejected (corrected
p < alpha); the judge *can replace the annotators* when ``omega >= 0.5``. As in the authors' code, an
annotator who shares fewer than ``min_instances`` (default 30) instances with the judge and another
annotator is skipped: no test, not in the correction, not in omega or rho; the skipped are named. The
humans are exactly the annotators named (names or patterns). The average advantage probability
``rho = mean_j rho^f_j`` over the tested annotators compares judges. epsilon is the cost-benefit allowance given to the judge for being
cheaper and faster: the paper recommends 0.2 for expert annotators and 0.1 for crowd workers.

Reference
---------
Calderon, N., Reichart, R. and Dror, R. (2025). The Alternative Annotator Test for LLM-as-a-Judge: How to
Statistically Justify Replacing Human Annotators with LLMs. ACL 2025, 16051-16081.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import defaults
from .._validation import check_alpha
from ..runtime.progress import ProgressCallback
from ..errors import DegenerateDataError, ParameterError, check_int
from ..serialization import ResultMixin, plain
from ..signature import Signature
from ..stats.significance.corrections import benjamini_yekutieli
from .agreement import key_verdicts
from .comparisons import Comparisons


MIN_INSTANCES_DEFAULT = 30
"""The authors' ``min_instances_per_human``."""


@dataclass(frozen=True)
class AltTestResult(ResultMixin):
    """Result of :func:`alt_test`.

    Attributes
    ----------
    judge : str
    can_replace : bool
        ``winning_rate >= 0.5``.
    winning_rate : float
        Share of annotators whose null hypothesis is rejected after the correction.
    advantage_probability : float
        ``rho``, the mean of the judge's advantage probabilities.
    table : pandas.DataFrame
        One row per annotator: ``annotator``, ``instances``, ``rho_judge``, ``rho_human``, ``t``, ``pvalue``,
        ``pvalue_corrected``, ``rejected``.
    epsilon, alpha : float
    n_excluded : int
        Keys the judge or the humans annotated that no test could use (no other human, or not judged by the
        judge).
    signature : Signature
    min_instances : int
        The fewest instances of a tested annotator.
    skipped : tuple of str
        Annotators with fewer instances, not tested (``tested`` is False in the table).
    """

    judge: str
    can_replace: bool
    winning_rate: float
    advantage_probability: float
    table: Any
    epsilon: float
    alpha: float
    n_excluded: int
    signature: Signature
    min_instances: int = MIN_INSTANCES_DEFAULT
    skipped: tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        """One sentence with the numbers behind it."""
        rejected = int(self.table["rejected"].sum())
        verb = "can" if self.can_replace else "cannot"
        skipped = (f" ({len(self.skipped)} annotator{'s' if len(self.skipped) > 1 else ''} with fewer than"
                   f" {self.min_instances} instances skipped)") if self.skipped else ""
        return (f"{self.judge} {verb} replace the annotators: it wins against {rejected} of"
                f" {len(self.table) - len(self.skipped)}{skipped}"
                f" (winning rate {self.winning_rate:.2f}, needs >= 0.5; epsilon {self.epsilon:g}, Benjamini-Yekutieli"
                f" at {self.alpha:g}); average advantage probability {self.advantage_probability:.3f}.")

    def frame_rows(self) -> list[dict[str, Any]]:
        return self.table.to_dict("records")

    def to_dict(self) -> dict[str, Any]:
        return {"analysis": "judge-alt-test", "judge": self.judge, "can_replace": self.can_replace,
                "winning_rate": self.winning_rate, "advantage_probability": plain(self.advantage_probability),
                "verdict": self.verdict, "annotators": plain(self.table.to_dict("records")), "epsilon": self.epsilon,
                "alpha": self.alpha, "n_excluded": self.n_excluded, "min_instances": self.min_instances,
                "skipped": list(self.skipped), "signature": str(self.signature)}


MIN_INSTANCES = MIN_INSTANCES_DEFAULT
"""The fewest instances an annotator's test uses (the authors' ``min_instances_per_human``: below it the
t-test's normality assumption is doubtful, and their code skips the annotator)."""


ALIGNMENTS = ("accuracy", "neg-rmse")
"""The authors' alignment scores: ``accuracy`` (categorical: the share of the other annotators agreeing) and
``neg-rmse`` (numeric: minus the root mean squared difference from the other annotators); a callable
``f(value, others) -> float`` is a user-chosen similarity."""


def _alignment(values: np.ndarray, others: np.ndarray, ok: np.ndarray, alignment) -> np.ndarray:
    """S(a, i) of every instance i: ``values`` (n,), the other annotators ``others`` (m', n) where ``ok``."""
    k = ok.sum(axis=0)
    if alignment == "accuracy":
        return np.sum((others == values) & ok, axis=0) / k
    if alignment == "neg-rmse":
        squares = np.where(ok, (others - values) ** 2, 0.0)
        return -np.sqrt(squares.sum(axis=0) / k)
    return np.array([float(alignment(values[i], others[ok[:, i], i])) for i in range(values.size)])


def alt_test_arrays(judge: np.ndarray, humans: np.ndarray, *, epsilon: float, alpha: float, min_instances: int = 1,
                    alignment: Any = "accuracy", progress: ProgressCallback | None = None):
    """The alt-test on arrays: ``judge`` (n,) and ``humans`` (m, n) annotations (categorical codes, or numbers
    with ``alignment='neg-rmse'``), NaN = not annotated.

    An annotator with fewer than ``min_instances`` usable instances is skipped (NaN statistics, not corrected,
    not counted in the winning rate).

    Returns ``(rho_f, rho_h, n_instances, t, p, p_corrected, rejected, tested)``, one entry per annotator.
    """
    from scipy.stats import t as t_dist

    m = humans.shape[0]
    annotated = ~np.isnan(humans)
    rho_f, rho_h, sizes, tstat, pvals = (np.full(m, np.nan) for _ in range(5))
    tested = np.zeros(m, dtype=bool)
    for j in range(m):
        others = np.delete(humans, j, axis=0)
        other_ok = np.delete(annotated, j, axis=0)
        use = annotated[j] & ~np.isnan(judge) & other_ok.any(axis=0)
        n = int(use.sum())
        sizes[j] = n
        if progress is not None:
            progress()
        if n == 0 or n < min_instances:
            continue
        s_f = _alignment(judge[use], others[:, use], other_ok[:, use], alignment)
        s_h = _alignment(humans[j, use], others[:, use], other_ok[:, use], alignment)
        w_f, w_h = (s_f >= s_h).astype(float), (s_h >= s_f).astype(float)
        rho_f[j], rho_h[j] = w_f.mean(), w_h.mean()
        d = w_h - w_f
        if n < 2:
            continue
        tested[j] = True
        sd = d.std(ddof=1)
        if sd == 0:
            tstat[j] = -np.inf if d.mean() < epsilon else np.inf
            pvals[j] = 0.0 if d.mean() < epsilon else 1.0
            continue
        tstat[j] = (d.mean() - epsilon) / (sd / np.sqrt(n))
        pvals[j] = float(t_dist.cdf(tstat[j], n - 1))
    corrected = benjamini_yekutieli(pvals)
    rejected = np.nan_to_num(corrected, nan=1.0) < alpha
    return rho_f, rho_h, sizes, tstat, pvals, corrected, rejected, tested


def _verdict_rows(comparisons: Comparisons, judge: str, humans) -> tuple[np.ndarray, np.ndarray]:
    """The verdict of the judge (K,) and of each human (m, K) on every key any of them judged (NaN: not)."""
    keys_j, verdict_j = key_verdicts(comparisons.judged_by(judge, param="judge"))
    per_human = [key_verdicts(comparisons.judged_by(h, param="humans")) for h in humans]
    keys = np.unique(np.concatenate([keys_j] + [k for k, _ in per_human]))
    judge_row = np.full(keys.size, np.nan)
    judge_row[np.searchsorted(keys, keys_j)] = verdict_j
    grid = np.full((len(humans), keys.size), np.nan)
    for h, (k, v) in enumerate(per_human):
        grid[h, np.searchsorted(keys, k)] = v
    return judge_row, grid


class RatingTable:
    """Numeric ratings of every output (a system's output on an input) by named raters, from a ScoreSet: a scorer
    with several annotators per cell gives one rater per annotator, ``'<scorer>/<k>'`` (k from 1, as
    :func:`~metaeval.judges.comparisons.comparisons_from_scores` names them), any other scorer one rater named
    like it. An instance of the alt-test is one output; a file of items rated by several annotators is a
    ScoreSet with one system (or one input)."""

    def __init__(self, ds):
        from .. import _validation as iv

        ds = iv.check_scoreset(ds)
        self.scores = ds
        self.ratings: dict[str, np.ndarray] = {}
        self.scorer_of: dict[str, str] = {}
        for scorer in ds.scorers:
            array = np.asarray(ds.annotations(scorer), dtype=np.float64)
            columns = ([(f"{scorer}/{k + 1}", array[:, :, k]) for k in range(array.shape[2])] if array.ndim == 3
                       else [(scorer, array)])
            for name, values in columns:
                self.ratings[name] = values.ravel()
                self.scorer_of[name] = scorer
        self.judges = tuple(self.ratings)

    def judge_names(self, names, *, param: str = "judges") -> tuple[str, ...]:
        """The raters named by ``names``: exact names or shell-style patterns, as
        :meth:`Comparisons.judge_names <metaeval.judges.comparisons.Comparisons.judge_names>`."""
        from fnmatch import fnmatchcase

        names = (names,) if isinstance(names, str) else tuple(names)
        if not names:
            raise ParameterError(f"`{param}` must name at least one rater; got none.")
        out: dict[str, None] = {}
        for name in names:
            matched = [name] if name in self.ratings else [
                r for r in self.judges if any(ch in str(name) for ch in "*?[") and fnmatchcase(r, str(name))]
            if not matched:
                shown = ", ".join(repr(r) for r in self.judges[:10]) + (", ..." if len(self.judges) > 10 else "")
                raise ParameterError(f"`{param}` must name raters of the scores ({shown}); got {name!r}.")
            out.update(dict.fromkeys(matched))
        return tuple(out)

    def signature_fields(self, names) -> dict[str, str]:
        """``source``: the scorers of the raters ``names`` (as comparisons made from those scorers name it), the
        scores' ``dataset`` (and ``subset``, ``aggregation``) and ``instances:outputs`` (each rated output is an
        instance, where comparisons made from the same scores have a pair of outputs)."""
        from .comparisons import scores_origin

        used = dict.fromkeys(self.scorer_of[n] for n in self.judges if n in set(names))
        origin = dict(scores_origin(self.scores, annotators=True))
        origin.pop("annotators")
        return {"source": f"scores:{','.join(used)}", **origin, "instances": "outputs"}


def alt_test_raters(data, humans, *, param: str = "humans") -> tuple[str, ...]:
    """The human annotators named by ``humans`` in ``data`` (a Comparisons or a ScoreSet)."""
    if not isinstance(data, Comparisons):
        data = RatingTable(data)
    return data.judge_names(humans, param=param)


def alt_test(comparisons: Comparisons, judge: str, *, humans, epsilon: float = defaults.ALT_TEST_EPSILON,
             alpha: float = defaults.ALT_TEST_ALPHA, min_instances: int = MIN_INSTANCES,
             alignment: Any = "accuracy", progress: ProgressCallback | None = None) -> AltTestResult:
    """The Alternative Annotator Test: can ``judge`` replace the human annotators?

    Parameters
    ----------
    comparisons : Comparisons or ScoreSet
        Pairwise verdicts (an instance is a key: an input and a pair of systems), or numeric ratings (a
        ScoreSet: an instance is one output, a system's on an input; a file of items each rated by several
        annotators is a ScoreSet with one system). A ScoreSet's raters are its scorers, a scorer with several
        annotators per cell giving one rater per annotator, ``'<scorer>/<k>'``.
    judge : str
        The candidate (an LLM judge, a metric).
    humans : str or list of str
        The human annotators (at least 2): names or shell-style patterns (``'expert_*'``). Only these count as
        humans; other judges of the comparisons are ignored.
    epsilon : float in [0, 1)
        Cost-benefit allowance (0.2 for experts, 0.1 for crowd workers, as the paper recommends).
    alpha : float
        False discovery rate of the Benjamini-Yekutieli correction.
    min_instances : int >= 1
        An annotator sharing fewer instances with the judge and another annotator is skipped (named and
        counted; the winning rate is over the tested annotators). Default 30, as the authors' code.
    alignment : {'accuracy', 'neg-rmse'} or callable
        The alignment score S of an annotation with the other annotators' (the authors' scoring functions):
        ``accuracy`` (default) on the verdicts of the keys (input and pair of systems), or on a ScoreSet the
        share of the other raters giving the same value (the authors' accuracy on labels); ``neg-rmse`` on
        numeric ratings (a ScoreSet, or the ratings behind comparisons made from scores; an instance is then a
        system's output on an input, ``S = -sqrt(mean_h (a - h)^2)``); a callable ``f(value, others) -> float``
        on those ratings.
    progress : callable, optional
        Called with no argument after each annotator's test (:mod:`metaeval.runtime.progress`).

    Returns
    -------
    AltTestResult

    Raises
    ------
    ParameterError
        Fewer than 2 human annotators, or epsilon outside [0, 1).
    DegenerateDataError
        No instance is annotated by the judge, the left-out annotator and another annotator, or no annotator
        has ``min_instances`` of them.
    """
    from ..data.scoreset import ScoreSet

    if isinstance(comparisons, ScoreSet):
        comparisons = RatingTable(comparisons)
    elif not isinstance(comparisons, Comparisons):
        raise ParameterError(f"`comparisons` must be a Comparisons or a ScoreSet; got {type(comparisons).__name__}.")
    if isinstance(comparisons, RatingTable):
        named = comparisons.judge_names(judge, param="judge")
        if len(named) != 1:
            raise ParameterError(f"`judge` must name one rater; got {judge!r}, which names {len(named)}.")
        judge = named[0]
    else:
        comparisons.judged_by(judge, param="judge")
    if humans is None:
        raise ParameterError("`humans` must name the human annotators (at least 2; names or patterns); got None.")
    humans = comparisons.judge_names(humans, param="humans")
    if judge in humans:
        raise ParameterError(f"`humans` must not include the judge; got {judge!r} in both.")
    if len(humans) < 2:
        raise ParameterError(f"`humans` must name at least 2 annotators (the test leaves one out and compares with the"
                             f" rest); got {len(humans)}.")
    try:
        epsilon = float(epsilon)
    except (TypeError, ValueError):
        epsilon = float("nan")
    if not 0.0 <= epsilon < 1.0:
        raise ParameterError(f"`epsilon` must be a number in [0, 1); got {epsilon!r}.")
    alpha = check_alpha(alpha)
    min_instances = check_int("min_instances", min_instances, minimum=1)
    if not callable(alignment) and alignment not in ALIGNMENTS:
        raise ParameterError(f"`alignment` must be one of {', '.join(map(repr, ALIGNMENTS))} or a callable; got"
                             f" {alignment!r}.")
    if isinstance(comparisons, RatingTable):
        judge_row = comparisons.ratings[judge]
        grid = np.vstack([comparisons.ratings[h] for h in humans])
        fields = comparisons.signature_fields((judge, *humans))
    elif alignment == "accuracy":
        judge_row, grid = _verdict_rows(comparisons, judge, humans)
        fields = comparisons.signature_fields()
    else:
        ratings = comparisons.ratings or {}
        if judge not in ratings or any(h not in ratings for h in humans):
            raise ParameterError(f"`alignment` {getattr(alignment, '__name__', alignment)!r} needs numeric ratings"
                                 " (comparisons made from scores: comparisons_from_scores, --scorer); got"
                                 " comparisons read as verdicts.")
        judge_row = np.asarray(ratings[judge], dtype=float).ravel()
        grid = np.vstack([np.asarray(ratings[h], dtype=float).ravel() for h in humans])
        fields = comparisons.signature_fields()
    rho_f, rho_h, sizes, tstat, pvals, corrected, rejected, tested = alt_test_arrays(
        judge_row, grid, epsilon=epsilon, alpha=alpha, min_instances=min_instances, alignment=alignment,
        progress=progress)
    if not np.nansum(sizes):
        raise DegenerateDataError(f"the alt-test of {judge!r} has no instance (input and pair) annotated by the judge"
                                  " and by two human annotators.")
    if not tested.any():
        raise DegenerateDataError(f"`min_instances` must be at most the instances of some annotator; got {min_instances}"
                                  f" (the annotators share at most {int(np.nanmax(sizes))} instances with the judge and"
                                  " another annotator).")
    usable = (~np.isnan(judge_row)) & ((~np.isnan(grid)).sum(axis=0) >= 2)
    annotated = (~np.isnan(judge_row)) | (~np.isnan(grid)).any(axis=0)
    import pandas as pd

    table = pd.DataFrame({"annotator": list(humans), "instances": sizes.astype(int), "tested": tested,
                          "rho_judge": rho_f, "rho_human": rho_h, "t": tstat, "pvalue": pvals,
                          "pvalue_corrected": corrected, "rejected": rejected})
    winning = float(rejected[tested].mean())
    skipped = tuple(h for h, t in zip(humans, tested) if not t)
    from .agreement import _listed

    sig = Signature.of(analysis="judge-alt-test", **fields, judge=judge, humans=_listed(humans),
                       alignment=alignment if isinstance(alignment, str) else
                       f"callable:{getattr(alignment, '__name__', 'similarity')}", epsilon=epsilon, alpha=alpha, correction="benjamini-yekutieli",
                       test="paired-t-one-sided", min_instances=min_instances)
    return AltTestResult(judge, winning >= 0.5, winning, float(np.nanmean(rho_f[tested])), table, epsilon, alpha,
                         int(annotated.sum() - usable.sum()), sig, min_instances, skipped)
