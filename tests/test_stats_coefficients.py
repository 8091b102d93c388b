"""Tests of metaeval.stats.coefficients (and the ranking-error reading of Kendall's tau)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metaeval.errors import ParameterError
from metaeval.stats.correlations import coefficients as coef
from metaeval.stats.correlations.coefficients import COEFFICIENTS, TIE_RTOL, canonical_coefficient, correlation
from metaeval.stats.correlations.ranking import ranking_error_interval, ranking_error_rate

RANK = ("spearman", "kendall-a", "kendall-b", "kendall-c")
DEFINED_ON_CONSTANT = ("accuracy", "tau-eq", "acc-eq")

# ----------------------------------------------------------------------------------------------------
# validation (every message pinned)


def test_canonical_coefficient_names_and_alias():
    assert [canonical_coefficient(c) for c in COEFFICIENTS] == list(COEFFICIENTS)
    assert canonical_coefficient("kendall") == "kendall-b"


def test_canonical_coefficient_message():
    with pytest.raises(ParameterError) as e:
        canonical_coefficient("foo")
    assert str(e.value) == (
        "`coefficient` must be one of 'pearson', 'spearman', 'kendall-a', 'kendall-b', 'kendall-c', "
        "'accuracy', 'tau-eq', 'acc-eq', 'pdp'; got 'foo'."
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(x=[1.0, 2.0], y=[1.0, 2.0, 3.0]), "`y` must have the shape of `x`, (2,); got shape (3,)."),
        (dict(x=1.0, y=1.0), "`x` must be an array with at least 1 dimension; got shape ()."),
        (dict(axis=1), "`axis` must be an integer in [-1, 1); got 1."),
        (dict(axis=0.5), "`axis` must be an integer in [-1, 1); got 0.5."),
        (dict(tie_threshold=-1.0, coefficient="acc-eq"), "`tie_threshold` must be a finite number >= 0; got -1.0."),
        (dict(tie_threshold=float("nan"), coefficient="acc-eq"),
         "`tie_threshold` must be a finite number >= 0; got nan."),
        (dict(tie_threshold="a", coefficient="acc-eq"), "`tie_threshold` must be a finite number >= 0; got 'a'."),
        (dict(tie_threshold=0.1, coefficient="kendall"),
         "`tie_threshold` must be 0 for coefficient 'kendall-b' (it applies to 'accuracy', 'tau-eq', 'acc-eq'); "
         "got 0.1."),
    ],
)
def test_correlation_messages(kwargs, message):
    args = dict(x=[1.0, 2.0, 3.0], y=[1.0, 3.0, 2.0], coefficient="pearson")
    args.update(kwargs)
    with pytest.raises(ParameterError) as e:
        correlation(args.pop("x"), args.pop("y"), args.pop("coefficient"), **args)
    assert str(e.value) == message


# ----------------------------------------------------------------------------------------------------
# helpers: oracles


def _tau_a(x, y):
    n = len(x)
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i in range(n) for j in range(i + 1, n))
    return s / (n * (n - 1) / 2)


def _scipy(x, y, coefficient):
    if coefficient == "pearson":
        return stats.pearsonr(x, y)[0]
    if coefficient == "spearman":
        return stats.spearmanr(x, y)[0]
    if coefficient == "kendall-a":
        return _tau_a(x, y)
    return stats.kendalltau(x, y, variant=coefficient[-1])[0]


def _brute_pairwise(x, y, coefficient, t=0.0):
    """Pairwise coefficients counted pair by pair; x (metric) ties when max <= min + t."""
    c = d = tx = ty = txy = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        xtie = max(x[i], x[j]) <= min(x[i], x[j]) + t
        ytie = y[i] == y[j]
        if xtie and ytie:
            txy += 1
        elif xtie:
            tx += 1
        elif ytie:
            ty += 1
        elif (x[i] - x[j]) * (y[i] - y[j]) > 0:
            c += 1
        else:
            d += 1
    p = c + d + tx + ty + txy
    if coefficient == "accuracy":
        return c / (c + d + tx) if c + d + tx else np.nan
    if coefficient == "acc-eq":
        return (c + txy) / p
    return (c + txy - d - tx - ty) / p


def _with_path(monkeypatch, pairwise: bool):
    monkeypatch.setattr(coef, "_use_pairwise", lambda n_rows, n: pairwise)


# ----------------------------------------------------------------------------------------------------
# reference values


def test_hand_computed_counts():
    # pairs: (0,1) tie in y, (1,2) tie in x, 4 concordant: C=4, D=0, T_x=1, T_y=1, T_xy=0
    x, y = [1.0, 2.0, 2.0, 3.0], [1.0, 1.0, 2.0, 3.0]
    expected = {"kendall-a": 4 / 6, "kendall-b": 4 / 5, "kendall-c": 2 * 4 / (16 * 2 / 3), "accuracy": 4 / 5,
                "acc-eq": 4 / 6, "tau-eq": 2 / 6}
    for name, value in expected.items():
        assert correlation(x, y, name) == pytest.approx(value, abs=1e-15), name
    # threshold 1 on x: only (0,3) stays untied in x: C=1, T_x=4, T_xy=1
    assert correlation(x, y, "acc-eq", tie_threshold=1.0) == pytest.approx(2 / 6)
    assert correlation(x, y, "tau-eq", tie_threshold=1.0) == pytest.approx(-2 / 6)
    assert correlation(x, y, "accuracy", tie_threshold=1.0) == pytest.approx(1 / 5)


@pytest.mark.parametrize("pairwise", [True, False])
@pytest.mark.parametrize("n", [2, 3, 9, 40, 150])
@pytest.mark.parametrize("coefficient", ["pearson", *RANK])
def test_against_scipy_with_ties(monkeypatch, pairwise, n, coefficient):
    _with_path(monkeypatch, pairwise)
    rng = np.random.default_rng(n)
    for _ in range(3):
        x = rng.integers(0, 5, n) / 3.0
        y = rng.integers(0, 4, n) + rng.integers(0, 2, n) * 0.5
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        assert correlation(x, y, coefficient) == pytest.approx(_scipy(x, y, coefficient), abs=1e-12)


@pytest.mark.parametrize("coefficient", ["pearson", *RANK])
def test_against_scipy_continuous(coefficient):
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    y = x + rng.normal(size=60)
    assert correlation(x, y, coefficient) == pytest.approx(_scipy(x, y, coefficient), abs=1e-12)


@pytest.mark.parametrize("pairwise", [True, False])
@pytest.mark.parametrize("coefficient", DEFINED_ON_CONSTANT)
@pytest.mark.parametrize("t", [0.0, 0.5, 1.0])
def test_pairwise_coefficients_against_brute_force(monkeypatch, pairwise, coefficient, t):
    _with_path(monkeypatch, pairwise)
    rng = np.random.default_rng(7)
    for n in (2, 5, 17, 40):
        x = rng.integers(0, 6, n) * 0.5
        y = rng.integers(0, 3, n) * 1.0
        expected = _brute_pairwise(x, y, coefficient, t)
        assert correlation(x, y, coefficient, tie_threshold=t) == pytest.approx(expected, abs=1e-15, nan_ok=True)


def test_large_global_vector_against_scipy():
    rng = np.random.default_rng(3)
    x = rng.integers(1, 6, (5000, 3)).mean(axis=1)
    y = rng.integers(1, 6, 5000) + 0.0
    assert correlation(x, y, "kendall-b") == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-12)
    assert correlation(x, y, "kendall-c") == pytest.approx(stats.kendalltau(x, y, variant="c")[0], abs=1e-12)
    assert correlation(x, y, "spearman") == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)


# ----------------------------------------------------------------------------------------------------
# ties from summation order


def _likert_means_two_orders():
    triples = np.array(list(itertools.product(range(1, 6), repeat=3)), dtype=float)
    a, b, c = triples.T
    forward = a / 3 + b / 3 + c / 3
    backward = c / 3 + b / 3 + a / 3
    exact = a + b + c  # exact integers, same order as the means
    return forward, backward, exact


def test_likert_means_tie_in_any_summation_order():
    forward, backward, exact = _likert_means_two_orders()
    differs = forward != backward
    assert differs.any()  # the float sums really differ in the last bit
    assert np.all(np.abs(forward - backward) <= TIE_RTOL * np.maximum(abs(forward), abs(backward)))
    rng = np.random.default_rng(0)
    human = rng.integers(1, 4, forward.size) + 0.0
    for coefficient in COEFFICIENTS:
        a = correlation(forward, human, coefficient)
        b = correlation(backward, human, coefficient)
        if coefficient in ("pearson", "pdp"):  # Pearson uses the values themselves: equal up to rounding
            assert a == pytest.approx(b, abs=1e-14)
        else:  # rank statistics are identical, and equal those of the exact integer sums
            assert a == b, coefficient
            assert a == pytest.approx(correlation(exact, human, coefficient), abs=1e-12), coefficient
    assert correlation(forward, human, "kendall-b") == pytest.approx(stats.kendalltau(exact, human)[0], abs=1e-12)


def test_ties_within_tolerance_in_small_vectors():
    x = np.array([1.0, 1.0 + 1e-12, 2.0, 2.0 - 1e-12])
    y = np.array([1.0, 2.0, 3.0, 4.0])
    # x is [1, 1, 2, 2] up to the tolerance: T_x = 2, S = 4
    assert correlation(x, y, "kendall-b") == pytest.approx(4 / np.sqrt(4 * 6))
    assert correlation(x, y, "spearman") == pytest.approx(stats.spearmanr([1, 1, 2, 2], y)[0])


# ----------------------------------------------------------------------------------------------------
# missing values and degenerate vectors


@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_nan_positions_are_dropped(coefficient):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, 30) + 0.0
    y = rng.integers(0, 4, 30) + 0.0
    x[[2, 5]] = np.nan
    y[[5, 9, 11]] = np.nan
    y[12] = np.inf
    keep = np.isfinite(x) & np.isfinite(y)
    assert correlation(x, y, coefficient) == pytest.approx(correlation(x[keep], y[keep], coefficient), abs=1e-14)


@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_fewer_than_two_pairs_is_nan(coefficient):
    assert np.isnan(correlation([1.0], [2.0], coefficient))
    assert np.isnan(correlation([1.0, np.nan, 3.0], [np.nan, 2.0, 1.0], coefficient))
    assert np.isnan(correlation(np.zeros(0), np.zeros(0), coefficient))
    assert np.isnan(correlation([np.nan, np.nan], [np.nan, np.nan], coefficient))


@pytest.mark.parametrize("coefficient", ["pearson", *RANK])
@pytest.mark.parametrize("constant", [[2.0, 2.0, 2.0, 2.0], [1.0, 1.0 + 2e-15, 1.0 - 2e-15, 1.0]])  # rounding level (within NOISE_RTOL)
def test_constant_vector_is_nan(coefficient, constant):
    other = [1.0, 2.0, 3.0, 5.0]
    assert np.isnan(correlation(constant, other, coefficient))
    assert np.isnan(correlation(other, constant, coefficient))


def test_pairwise_coefficients_on_constant_vectors():
    metric, human = [2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 2.0, 3.0]
    assert correlation(metric, human, "accuracy") == 0.0  # every metric tie is a disagreement
    assert correlation(metric, human, "acc-eq") == pytest.approx(1 / 6)  # the one pair tied in both
    assert correlation(metric, human, "tau-eq") == pytest.approx((1 - 5) / 6)
    assert np.isnan(correlation(human, metric, "accuracy"))  # human ties every pair


# ----------------------------------------------------------------------------------------------------
# batching and paths


@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_batched_equals_per_vector(coefficient):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 5, (3, 7, 4)) / 3.0
    y = rng.integers(0, 3, (3, 7, 4)) + 0.0
    x[0, 2, 1] = np.nan
    y[1, :, 3] = 5.0  # constant slices
    out = correlation(x, y, coefficient, axis=1)
    assert out.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            expected = correlation(x[i, :, j], y[i, :, j], coefficient)
            assert out[i, j] == pytest.approx(expected, abs=1e-14, nan_ok=True)
    np.testing.assert_array_equal(out, correlation(np.moveaxis(x, 1, -1), np.moveaxis(y, 1, -1), coefficient))


@pytest.mark.parametrize("n", [5, 40, 300])
@pytest.mark.parametrize("t", [0.0, 0.4])
def test_pairwise_and_sorting_paths_identical(monkeypatch, n, t):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 8, (20, n)) * 0.2
    y = rng.integers(0, 5, (20, n)) + 0.0
    x[rng.random(x.shape) < 0.1] = np.nan
    y[3] = 1.0
    for coefficient in COEFFICIENTS:
        if t and coefficient not in DEFINED_ON_CONSTANT:
            continue
        _with_path(monkeypatch, True)
        a = correlation(x, y, coefficient, tie_threshold=t)
        _with_path(monkeypatch, False)
        b = correlation(x, y, coefficient, tie_threshold=t)
        np.testing.assert_array_equal(a, b)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=2, max_value=90).flatmap(
        lambda n: st.tuples(
            st.lists(st.one_of(st.integers(-4, 4), st.just(None)), min_size=n, max_size=n),
            st.lists(st.one_of(st.integers(0, 40), st.just(None)), min_size=n, max_size=n),
        )
    ),
    st.sampled_from([0.0, 0.5, 2.0]),
)
def test_paths_identical_property(data, t):
    x, y = (np.array([np.nan if v is None else v for v in values], dtype=float) for values in data)
    x = x / 2.0
    original = coef._use_pairwise
    try:
        for coefficient in COEFFICIENTS:
            tt = t if coefficient in DEFINED_ON_CONSTANT else 0.0
            coef._use_pairwise = lambda n_rows, n: True
            a = correlation(x, y, coefficient, tie_threshold=tt)
            coef._use_pairwise = lambda n_rows, n: False
            b = correlation(x, y, coefficient, tie_threshold=tt)
            assert a == b or (np.isnan(a) and np.isnan(b)), coefficient
    finally:
        coef._use_pairwise = original


def test_inputs_not_mutated_and_integer_input():
    x = np.array([3, 1, 2, 5])
    y = np.array([1.0, np.nan, 2.0, 4.0])
    x0, y0 = x.copy(), y.copy()
    for coefficient in COEFFICIENTS:
        correlation(x, y, coefficient)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)
    assert correlation(x, y, "kendall-b") == pytest.approx(1 / 3)  # pairs of (3, 1), (2, 2), (5, 4)


def test_scalar_result_for_vectors():
    r = correlation([1.0, 2.0, 3.0], [1.0, 3.0, 2.0], "pearson")
    assert np.ndim(r) == 0


# ----------------------------------------------------------------------------------------------------
# properties

_vectors = st.integers(min_value=2, max_value=25).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(-3, 3), min_size=n, max_size=n),
        st.lists(st.integers(-3, 3), min_size=n, max_size=n),
    )
)


@settings(max_examples=60, deadline=None)
@given(_vectors)
def test_symmetry_range_and_sign(data):
    x, y = (np.array(v, dtype=float) for v in data)
    for coefficient in COEFFICIENTS:
        r = correlation(x, y, coefficient)
        if np.isnan(r):
            continue
        low = 0.0 if coefficient in ("accuracy", "acc-eq") else -1.0
        assert low <= r <= 1.0
        if coefficient != "accuracy":
            assert correlation(y, x, coefficient) == pytest.approx(r, abs=1e-12)
        if coefficient in ("pearson", *RANK):
            assert correlation(-x, y, coefficient) == pytest.approx(-r, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(_vectors)
def test_rank_coefficients_invariant_to_monotone_transforms(data):
    x, y = (np.array(v, dtype=float) for v in data)
    fx = np.exp(x) + x ** 3  # strictly increasing
    for coefficient in (*RANK, *DEFINED_ON_CONSTANT):
        a = correlation(x, y, coefficient)
        b = correlation(fx, y, coefficient)
        assert a == pytest.approx(b, abs=1e-12, nan_ok=True)


# ----------------------------------------------------------------------------------------------------
# ranking-error rate


def test_ranking_error_rate():
    assert ranking_error_rate(0.6) == pytest.approx(0.2)
    np.testing.assert_allclose(ranking_error_rate([1.0, -1.0, 0.0]), [0.0, 1.0, 0.5])
    assert np.isnan(ranking_error_rate(np.nan))
    # without ties (1 - tau) / 2 is the fraction of discordant pairs
    x, y = [1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 4.0, 3.0]
    assert ranking_error_rate(correlation(x, y, "kendall-a")) == pytest.approx(2 / 6)
    assert ranking_error_interval(0.2, 0.6) == pytest.approx((0.2, 0.4))
    with pytest.raises(ParameterError) as e:
        ranking_error_rate(1.5)
    assert str(e.value) == "`tau` must be in [-1, 1]; got 1.5."
