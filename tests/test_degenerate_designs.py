"""Degenerate designs (issue 10, item 5): one input, one system.

wmt19-da-sys holds one input per system (system-level WMT scores): a summary-level table there averaged a
single per-input correlation (the system level again) and BOOT-INPUTS gave zero-width intervals, silently.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import DegenerateWarning, ScoreSetError
from metaeval.stats.resampling.draws import bootstrap_draws, permutation_draws

SUMMARY_ONE_INPUT = ("a summary-level correlation needs at least 2 inputs (it averages one correlation per input);"
                     " got 1. With one input per system use the system level.")


@pytest.fixture(scope="module")
def wmt19():
    return me.load_dataset("wmt19-da-sys")


def test_summary_level_with_one_input_is_refused(wmt19):
    for call in (me.correlate, me.bootstrap_ci):
        with pytest.raises(ScoreSetError) as info:
            call(wmt19, "bleu", "da.z", level="summary")
        assert str(info.value) == SUMMARY_ONE_INPUT


def test_a_table_without_levels_skips_the_summary_level_for_one_input(wmt19):
    with pytest.warns(DegenerateWarning):
        table = me.correlation_table(wmt19, "da.z", ["bleu", "chrf"], n_resamples=50)
    assert table.levels == ("system",)
    with pytest.raises(ScoreSetError, match="summary-level correlation needs at least 2 inputs"):
        me.correlation_table(wmt19, "da.z", ["bleu"], levels=["system", "summary"], ci="none")


@pytest.mark.parametrize("draw, method, message", [
    (bootstrap_draws, "inputs", "BOOT-INPUTS cannot resample the inputs: the data has 1 input (every resample is "
                                "the original data); the result shows no input-to-input variability."),
    (bootstrap_draws, "both", "BOOT-BOTH cannot resample the inputs: the data has 1 input (only the systems vary);"
                              " the result shows no input-to-input variability."),
    (permutation_draws, "inputs", "PERM-INPUTS cannot resample the inputs: the data has 1 input (there are 2 "
                                  "permutations); the result shows no input-to-input variability."),
])
def test_a_method_that_cannot_vary_warns(draw, method, message):
    with pytest.warns(DegenerateWarning) as caught:
        draw(8, 1, method=method, n_resamples=5, rng=0)
    assert [str(w.message) for w in caught] == [message]


def test_one_system_warns_too():
    with pytest.warns(DegenerateWarning, match="BOOT-SYSTEMS cannot resample the systems: the data has 1 system"):
        bootstrap_draws(1, 9, method="systems", n_resamples=5, rng=0)


@pytest.mark.parametrize("draw, method", [(bootstrap_draws, "systems"), (permutation_draws, "both"),
                                          (permutation_draws, "systems")])
def test_methods_that_vary_do_not_warn(draw, method):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        draw(8, 1, method=method, n_resamples=5, rng=0)


def test_boot_inputs_interval_with_one_input_is_flagged_not_hidden(wmt19):
    with pytest.warns(DegenerateWarning, match="BOOT-INPUTS cannot resample the inputs"):
        r = me.bootstrap_ci(wmt19, "bleu", "da.z", level="system", method="inputs", n_resamples=50, rng=0)
    assert r.ci[0] == r.ci[1] == pytest.approx(r.statistic)
    assert np.isfinite(r.statistic)


def test_cli_on_one_input(capsys):
    assert main(["correlate", "--dataset", "wmt19-da-sys", "--metric", "bleu", "--n-resamples", "50"]) == 0
    out, err = capsys.readouterr()
    assert "system-level" in out and "summary" not in out
    assert err.count("BOOT-BOTH cannot resample the inputs") == 1  # folded: one line for every cell
    assert main(["correlate", "--dataset", "wmt19-da-sys", "--level", "summary", "--n-resamples", "50"]) == 2
    assert SUMMARY_ONE_INPUT in capsys.readouterr().err
