"""The null draws of the segment-level MT tasks (stats/mt/segment_null.py): the kernels shared by the metric
pairs against the hybrids built and scored one by one (the reference path), on the same masks, on real data."""
import numpy as np
import pytest

import metaeval as me
from metaeval.stats.mt.segment_null import segment_null
from metaeval.stats.mt.wmt import resampled_task
from metaeval.stats.mt.wmt_permutation import random_bits


def _metrics(systems=8, segments=60, seed=0):
    """WMT20 en-de MQM (a corner of it) and metrics like the audit's: continuous, tie-heavy (rounded to 5
    levels), LLM-judge-like in steps of 5, a constant per system (ties within every system), random."""
    ds = me.load_dataset("wmt20-mqm-ende")
    z = ds.matrix("mqm")[:systems, :segments]
    rng = np.random.default_rng(seed)
    noisy = z + rng.normal(scale=2.0, size=z.shape)
    spread = noisy.max() - noisy.min()
    rounded = np.round(4 * (noisy - noisy.min()) / spread)
    judge = 5.0 * np.round(20.0 / (1.0 + np.exp(-(z + rng.normal(size=z.shape) + 2.0) / 3.0)))
    per_system = np.broadcast_to(noisy.mean(axis=1, keepdims=True), z.shape)
    xs = np.stack([noisy, z + rng.normal(scale=4.0, size=z.shape), rounded, judge, per_system,
                   rng.normal(size=z.shape)])
    return xs, z


def _masks(seed):
    gen = np.random.default_rng(seed)
    return lambda b, n: random_bits(gen, b, n)


@pytest.mark.parametrize("level,coefficient", [
    ("summary", "pearson"), ("summary", "kendall-b"), ("summary", "kendall-c"), ("summary", "acc-eq"),
    ("summary", "pdp"), ("by-system", "pearson"), ("by-system", "kendall-b"), ("by-system", "pdp"),
    ("global", "kendall-b"), ("summary", "spearman"), ("by-system", "tau-eq")])
def test_shared_null_equals_the_hybrids_scored_one_by_one(level, coefficient):
    xs, z = _metrics()
    n_cells = z.size

    def statistic(h, zz):
        return resampled_task(h, zz, level=level, coefficient=coefficient)

    runs = []
    for engine in ("auto", "reference"):
        source = _masks(7)
        runs.append(segment_null(xs, z, lambda b: source(b, n_cells), 40, level, coefficient, statistic,
                                 engine=engine))
    fast, ref = runs
    assert fast.shape == ref.shape == (15, 40)
    assert np.array_equal(np.isnan(fast), np.isnan(ref))
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)
    assert np.nanstd(ref) > 0  # the draws vary: not a vacuous comparison



@pytest.mark.parametrize("task", ["global/pearson", "global/kendall-b", "summary/kendall-b", "summary/acc23",
                                  "summary/pdp", "by-system/kendall-b", "by-system/pdp", "system/pearson",
                                  "system/accuracy", "system/acc23"])
def test_subset_statistics_at_once_equal_each_subset_on_its_own(task):
    """The audit's ranking consistency: a task's statistics on segment subsets from 0/1 weights (one call)
    against the task run on each subset's own language pair."""
    from metaeval.mt.tasks import Draws, TaskSettings, language_pair, make_task, subsample_statistics

    xs, z = _metrics(systems=8, segments=80)
    names = [f"m{i}" for i in range(xs.shape[0])]
    ds = me.ScoreSet.from_matrices({**dict(zip(names, xs)), "mqm": z}, humans=["mqm"])
    level, stat = task.split("/")
    gen = np.random.default_rng(5)
    subsets = np.zeros((6, 80), dtype=bool)
    for row in subsets:
        row[gen.choice(80, size=40, replace=False)] = True
    options = dict(human_ties="skip", darr_threshold=25.0, rtol=me.defaults.TIE_TOLERANCE)
    whole = language_pair(ds, names, "mqm", {}, {}, np.ones(80, dtype=bool))
    at_once = subsample_statistics(whole, level, stat, subsets, **options)
    task = make_task(level, stat, TaskSettings(recalibrate=False, spa_permutations=0, pvalue="randomized", **options))
    one_by_one = [task.run(language_pair(ds, names, "mqm", {}, {}, row), Draws(permute=True, k=0, gen=None,
                                                                                keep=False)).observed
                  for row in subsets]
    np.testing.assert_allclose(at_once, np.array(one_by_one, dtype=float), rtol=0, atol=1e-12)
