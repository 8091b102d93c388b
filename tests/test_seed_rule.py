"""The library-wide seed rule: ``rng=None`` draws a concrete integer seed and records it (``seed:<int>``),
so a fresh-entropy result is rebuilt by passing that seed back (metaeval.stats.resampling.draws.check_rng)."""
import numpy as np
import pytest

import metaeval as me
from metaeval.stats.resampling.draws import FRESH_SEED_BITS, bootstrap_draws, check_rng, fresh_seed


def test_none_draws_a_concrete_non_negative_int_seed():
    seeds = set()
    for _ in range(20):
        gen, seed = check_rng(None)
        assert type(seed) is int and 0 <= seed < 2 ** FRESH_SEED_BITS
        # the Generator is default_rng(seed): the recorded seed rebuilds its stream
        assert np.array_equal(gen.integers(0, 1 << 30, size=8), np.random.default_rng(seed).integers(0, 1 << 30, size=8))
        seeds.add(seed)
    assert len(seeds) == 20  # fresh entropy every call
    assert isinstance(fresh_seed(), int)


def test_int_and_generator_seeds_are_recorded_as_before():
    assert check_rng(7)[1] == 7
    assert check_rng(np.int64(7))[1] == 7
    gen = np.random.default_rng(1)
    assert check_rng(gen) == (gen, "generator")


def _signature_seed(result) -> int:
    seed = result.signature.as_dict()["seed"]
    assert isinstance(seed, int) and seed >= 0, seed
    return seed


def test_fresh_bootstrap_interval_is_rebuilt_from_its_signature(tiny_scoreset):
    fresh = me.bootstrap_ci(tiny_scoreset, "a", "human", level="system", method="both", n_resamples=200,
                            pvalue_method="permutation")
    seed = _signature_seed(fresh)
    assert f"|seed:{seed}|" in str(fresh.signature)
    again = me.bootstrap_ci(tiny_scoreset, "a", "human", level="system", method="both", n_resamples=200,
                            pvalue_method="permutation", rng=seed)
    assert (again.ci, again.pvalue) == (fresh.ci, fresh.pvalue)
    assert str(again.signature) == str(fresh.signature)


def test_fresh_system_comparison_is_rebuilt_from_its_signature(tiny_scoreset):
    fresh = me.compare_systems(tiny_scoreset, "human", systems=["s0", "s5"], n_resamples=50)
    seed = _signature_seed(fresh)
    again = me.compare_systems(tiny_scoreset, "human", systems=["s0", "s5"], n_resamples=50, rng=seed)
    assert str(again.signature) == str(fresh.signature)
    assert again.to_frame().equals(fresh.to_frame())


def test_fresh_draws_match_the_drawn_seed():
    gen, seed = check_rng(None)
    a = bootstrap_draws(4, 9, method="both", n_resamples=6, rng=gen)
    b = bootstrap_draws(4, 9, method="both", n_resamples=6, rng=seed)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.cols, b.cols)


def test_bad_rng_message_is_unchanged():
    with pytest.raises(me.errors.ParameterError) as info:
        check_rng(-1)
    assert str(info.value) == "`rng` must be None, a non-negative integer seed or a numpy.random.Generator; got -1."
