"""Type-I error and power of `mt`'s two tests between metrics at WMT shape (docs/calibration.md, issue 19).

A seeded simulation: N = 10 systems x M = 1000 segments, human ``z_im = q_i + e_im`` (``q ~ N(0, 0.3^2)``,
``e ~ N(0, 1)``), metrics ``x_im = z_im + u_i + d_im`` with a system-level error ``u_i ~ N(0, s_u^2)`` and a
segment-level error ``d_im ~ N(0, 1)``, all independent. One-sided test "metric 1 beats metric 2" on the tasks
system/pearson and system/accuracy, at alpha = 0.05, with mt-metrics-eval's permutation test (system scores
swapped) and with the paired bootstrap over segments. Run ``python tests/test_mt_calibration.py`` for the table
of docs/calibration.md.
"""
import numpy as np
import pytest

import metaeval as me

SCENARIOS = {
    # name: (system-level error sd of metric 1, of metric 2); equal = H0 (exchangeable metrics)
    "H0, segment errors only": (0.0, 0.0),
    "H0, system errors 0.1": (0.1, 0.1),
    "H1, system errors 0.05 vs 0.15": (0.05, 0.15),
}


def simulate(scenario, reps, k, seed=0, n=10, m=1000):
    """Rejection rates ``{(task, test): rate}`` of "metric 1 beats metric 2" at alpha 0.05."""
    su1, su2 = SCENARIOS[scenario]
    rng = np.random.default_rng(seed)
    hits = {}
    for r in range(reps):
        q = rng.normal(scale=0.3, size=(n, 1))
        z = q + rng.normal(size=(n, m))
        x1 = z + rng.normal(scale=su1, size=(n, 1)) + rng.normal(size=(n, m))
        x2 = z + rng.normal(scale=su2, size=(n, 1)) + rng.normal(size=(n, m))
        ds = me.ScoreSet.from_matrices({"h": z, "m1": x1, "m2": x2}, humans=["h"], name="sim")
        for test in ("permutation", "bootstrap"):
            res = me.mt_evaluate(ds, ["m1", "m2"], "h", tasks=["system/pearson", "system/accuracy"],
                                 significance=test, n_resamples=k, rng=int(rng.integers(2 ** 31)))
            for task in ("system/pearson", "system/accuracy"):
                p = res.task_pvalues[f"sim:{task}"][0, 1]
                hits[(task, test)] = hits.get((task, test), 0) + (p < 0.05)
    return {key: v / reps for key, v in hits.items()}


@pytest.mark.slow
def test_permutation_holds_its_level_and_the_bootstrap_does_not_under_system_errors():
    reps = 120
    h0 = simulate("H0, system errors 0.1", reps=reps, k=200, seed=1)
    se = np.sqrt(0.05 * 0.95 / reps)
    # mt-metrics-eval's permutation test is exact for exchangeable metrics
    assert h0[("system/pearson", "permutation")] <= 0.05 + 3 * se
    # the segment bootstrap treats the metrics' fixed system-level errors as a real difference
    assert h0[("system/pearson", "bootstrap")] > 0.05 + 3 * se


if __name__ == "__main__":
    for name in SCENARIOS:
        rates = simulate(name, reps=200, k=200, seed=1)
        print(name, {f"{t} {s}": round(v, 3) for (t, s), v in sorted(rates.items())})
