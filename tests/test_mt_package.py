"""The MT wing as one package (issue 38 items 1-3): tasks that run themselves, pooled accuracy as a task over
language pairs, validation once in the library with the caller's names, a complete signature when the result is
built, `metaeval mt` a group with a default command that loads no scoring module."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import ParameterError
from metaeval.mt.tasks import Draws, PooledAccuracyTask, TaskSettings, language_pair, make_task

SETTINGS = TaskSettings(recalibrate=False, spa_permutations=50, pvalue="randomized", human_ties="count",
                        darr_threshold=25.0, rtol=me.defaults.TIE_TOLERANCE)


def _lp(seed, systems=6, segments=30):
    rng = np.random.default_rng(seed)
    human = rng.normal(size=(systems, segments)) + np.arange(systems)[:, None]
    mats = {"mqm": human, "good": human + rng.normal(scale=0.5, size=human.shape),
            "noisy": human + rng.normal(scale=3.0, size=human.shape)}
    return me.ScoreSet.from_matrices(mats, humans=["mqm"], name=f"lp{seed}")


@pytest.fixture(scope="module")
def data():
    return {"en-de": _lp(1), "zh-en": _lp(2)}


def test_a_task_runs_itself_as_mt_evaluate_runs_it(data):
    res = me.mt_evaluate(data, ["good", "noisy"], "mqm", protocol="mean",
                         tasks=["system/pearson", "summary/kendall-b", "summary/acc23", "system/accuracy"],
                         n_resamples=30, rng=3)
    for lp, ds in data.items():
        lpd = language_pair(ds, ["good", "noisy"], "mqm", {}, {}, np.ones(ds.shape[1], dtype=bool))
        for name in ("system/pearson", "summary/kendall-b", "summary/acc23"):
            level, stat = name.split("/")
            outcome = make_task(level, stat, SETTINGS).run(lpd, Draws(permute=True, k=0, gen=None, keep=False))
            assert outcome.draws is None
            np.testing.assert_array_equal(outcome.observed, res.statistics[res.tasks.index(f"{lp}:{name}")])


def test_pooled_accuracy_is_a_task_over_the_language_pairs(data):
    """Pooled pairwise accuracy: agreements summed over every language pair's system pairs (hand-counted)."""
    lps = [language_pair(ds, ["good", "noisy"], "mqm", {}, {}, np.ones(ds.shape[1], dtype=bool))
           for ds in data.values()]
    outcome = PooledAccuracyTask(SETTINGS).run(lps, Draws(permute=True, k=0, gen=None, keep=False))
    agree, pairs = np.zeros(2), 0
    for lp in lps:
        xbar, zbar = lp.xbar, lp.zbar
        for a in range(len(zbar)):
            for b in range(a + 1, len(zbar)):
                pairs += 1
                agree += np.sign(xbar[:, a] - xbar[:, b]) == np.sign(zbar[a] - zbar[b])
    np.testing.assert_allclose(outcome.observed, agree / pairs)
    res = me.mt_evaluate(data, ["good", "noisy"], "mqm", protocol="mean", tasks=["system/accuracy"],
                         n_resamples=20, rng=0)
    np.testing.assert_allclose(res.statistics[res.tasks.index("pooled:system/accuracy")], agree / pairs)


def test_errors_name_the_callers_words(data):
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, ["good"], "nope", params={"human": "--human"})
    assert str(err.value).startswith("`--human`: the gold of language pair 'en-de' must be one of its scorers; got"
                                     " 'nope' (its human scorers: 'mqm';")
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, ["good", "good"], "mqm", params={"metrics": "--metric"})
    assert str(err.value) == "`--metric` must not repeat a scorer; got ['good', 'good']."
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, ["good"], "mqm", exclude_systems=["zz"], params={"exclude_systems": "--exclude-system"})
    assert str(err.value).startswith("`--exclude-system` must name a system of the data or 'LP=SYSTEM'; got 'zz'")
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(data, ["good"], "mqm", params={"seed": "--seed"})
    assert str(err.value) == ("`params` must map some of 'human', 'metrics', 'exclude_systems', 'human_baselines', "
                              "'n_resamples', 'rater_waves', 'aggregation', 'intervals' to names; got {'seed': '--seed'}.")


def test_rater_waves_in_the_library_and_the_signature(shared_data):
    ratings = me.read_mqm_ratings(shared_data / "wmt" / "mqm_ratings" / "sxs_mqm_generalMT2023_ende.3ratings.tsv.gz")
    ds = ratings.scores
    rng = np.random.default_rng(0)
    noisy = me.ScoreSet({**{s: ds.annotations(s) for s in ds.scorers},
                         "metric-A": ds.matrix("mqm") + rng.normal(size=ds.shape)},
                        systems=ds.systems, inputs=ds.inputs, humans=ds.humans, name="ende")
    res = me.mt_evaluate({"en-de": noisy}, ["metric-A"], "mqm.wave1", protocol="mean", tasks=["system/pearson"],
                         human_baselines=["mqm.wave2"], rater_waves=2, n_resamples=20, rng=4,
                         exclude_systems=["refA"])
    assert str(res.signature).split("|")[-2] == "rater_waves:2"
    assert res.human_baselines == ("mqm.wave2",)
    drawn = me.mt_evaluate({"en-de": noisy}, ["metric-A"], "mqm.wave1", protocol="mean", tasks=["system/pearson"],
                           rater_waves=2, n_resamples=20, rng=np.random.default_rng(1), exclude_systems=["refA"])
    seed = int(drawn.signature.as_dict()["seed"])  # a Generator: the seed drawn from it is recorded
    again = me.mt_evaluate({"en-de": noisy}, ["metric-A"], "mqm.wave1", protocol="mean", tasks=["system/pearson"],
                           rater_waves=2, n_resamples=20, rng=seed, exclude_systems=["refA"])
    assert str(again.signature) == str(drawn.signature)
    np.testing.assert_array_equal(again.statistics, drawn.statistics)


def test_mt_is_a_group_whose_default_command_is_evaluate(capsys):
    assert main(["mt", "--show-protocol", "mean"]) == 0
    default = capsys.readouterr().out
    assert main(["mt", "evaluate", "--show-protocol", "mean"]) == 0
    assert capsys.readouterr().out == default and default.startswith("protocol mean")
    assert main(["mt", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "evaluate (default)" in help_text and "audit" in help_text


def test_importing_the_mt_command_loads_no_scoring_module():
    code = ("import sys; from metaeval.cli.mt_group import mt; "
            "print(sorted(m for m in sys.modules if m.startswith(('metaeval.scoring', 'metaeval.metrics', "
            "'metaeval.mt', 'pandas', 'scipy', 'matplotlib'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.replace("'", '"')) == []


# --- mt audit audits the protocol the user runs (issue 41 item 3) ----------------------------------------------

def _three(seed):
    ds = _lp(seed, systems=6, segments=40)
    rng = np.random.default_rng(seed + 10)
    mats = {s: ds.matrix(s) for s in ds.scorers}
    mats["mid"] = mats["mqm"] + rng.normal(scale=1.5, size=ds.shape)
    mats["rater2"] = mats["mqm"] + rng.normal(scale=1.0, size=ds.shape)
    return me.ScoreSet.from_matrices(mats, humans=["mqm", "rater2"], name=ds.name)


def test_audit_runs_the_protocol_given_and_records_it():
    data = {"en-de": _three(1), "zh-en": _three(2)}
    res = me.mt_audit(data, ["good", "noisy", "mid"], "mqm", protocol="wmt24", n_resamples=20, n_consistency=2,
                      accuracy_targets=(), rng=0)
    assert res.tasks == ("en-de:system/soft-accuracy", "en-de:summary/acc23", "zh-en:system/soft-accuracy",
                         "zh-en:summary/acc23")
    assert "|protocol:wmt24|" in str(res.signature)
    plain = me.mt_audit(data, ["good", "noisy", "mid"], "mqm", tasks=["system/pearson"], n_resamples=20,
                        n_consistency=0, accuracy_targets=(), rng=0)
    assert "protocol:" not in str(plain.signature)  # the default grid under the plain mean, as before


def test_audit_ranks_human_baselines_and_records_the_tie_tolerance():
    data = {"en-de": _three(1), "zh-en": _three(2)}
    res = me.mt_audit(data, ["good", "noisy", "mid"], "mqm", tasks=["system/pearson", "summary/kendall-b"],
                      human_baselines=["rater2"], tie_tolerance=1e-6, n_resamples=20, n_consistency=2,
                      accuracy_targets=(), rng=0)
    kinds = {r["scorer"]: r["kind"] for r in res.rows}
    assert kinds["rater2"] == "baseline" and kinds["good"] == "metric" and kinds["sentinel-random"] == "sentinel"
    assert "rater2 (human)" in res.sentinel_frame().columns
    assert "|human_baselines:rater2|" in str(res.signature) and "tie_tolerance" in str(res.signature)


def test_audit_with_candidates_for_one_language_pair_names_what_it_left_out(tmp_path, capsys):
    data = {"en-de": _three(1), "zh-en": _three(2)}
    for lp, ds in data.items():
        me.write_scores(ds, tmp_path / f"{lp}.csv")
    ds = data["en-de"]
    lines = [json.dumps({"system": s, "input": i, "candidate": "w " * (1 + (a * 7 + b) % 9)})
             for a, s in enumerate(ds.systems) for b, i in enumerate(ds.inputs)]
    (tmp_path / "out.jsonl").write_text("\n".join(lines) + "\n")
    argv = ["mt", "audit", "--scores", f"en-de={tmp_path / 'en-de.csv'}", "--scores", f"zh-en={tmp_path / 'zh-en.csv'}",
            "--human", "mqm", "--metric", "good", "--metric", "noisy", "--metric", "mid", "--task", "system/pearson",
            "--n-resamples", "20", "--consistency", "0", "--accuracy-target", "0.8", "--format", "json",
            "--candidates", f"en-de={tmp_path / 'out.jsonl'}"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["notes"][0] == ("sentinel-length left out: no candidate texts for 'zh-en' (the sentinels are ranked"
                               " in every language pair; give the candidates of each)")
    assert "sentinel-length" not in out["sentinels"]


# --- random streams keyed by what they serve (issue 41 item 1) -------------------------------------------------

TASKS = ["system/pearson", "system/accuracy", "system/kendall-b", "summary/kendall-b", "summary/acc23",
         "system/soft-accuracy", "global/pearson", "by-system/kendall-b"]
METRICS = ["good", "noisy", "mid"]


@pytest.fixture(scope="module")
def three():
    data = {"en-de": _three(1), "zh-en": _three(2), "de-en": _three(3)}
    full = me.mt_evaluate(data, METRICS, "mqm", protocol="mean", tasks=TASKS, n_resamples=40, spa_permutations=40,
                          rng=11)
    return data, full


@pytest.mark.parametrize("draw", range(5))
def test_a_result_never_depends_on_the_other_tasks_metrics_or_language_pairs(three, draw):
    """For random subsets of tasks, metrics and language pairs, every task's statistics and p-values equal those
    of the call with everything (the metric pairs of a task still share its draws)."""
    data, full = three
    r = np.random.default_rng(draw)
    tasks = [str(t) for t in r.choice(TASKS, size=int(r.integers(1, 4)), replace=False)]
    metrics = [str(m) for m in r.choice(METRICS, size=int(r.integers(2, 4)), replace=False)]
    lps = [str(lp) for lp in r.choice(list(data), size=int(r.integers(1, 4)), replace=False)]
    sub = me.mt_evaluate({lp: data[lp] for lp in lps}, metrics, "mqm", protocol="mean", tasks=tasks, n_resamples=40,
                         spa_permutations=40, rng=11)
    idx = [METRICS.index(m) for m in metrics]
    for t, name in enumerate(sub.tasks):
        if name.startswith("pooled:"):
            continue  # pooled over the language pairs of the call
        f = full.tasks.index(name)
        np.testing.assert_array_equal(sub.statistics[t], full.statistics[f][idx])
        np.testing.assert_array_equal(sub.task_pvalues[name], full.task_pvalues[name][np.ix_(idx, idx)])


def test_the_audits_delta_band_does_not_move_with_an_unrelated_task(three):
    data = {lp: three[0][lp] for lp in ("en-de", "zh-en")}
    kw = dict(n_resamples=30, n_consistency=3, accuracy_targets=(0.8,), rng=5)
    one = me.mt_audit(data, METRICS, "mqm", tasks=["system/accuracy"], **kw)
    two = me.mt_audit(data, METRICS, "mqm", tasks=["system/accuracy", "global/pearson"], **kw)
    pd.testing.assert_frame_equal(one.delta_accuracy.to_frame(), two.delta_accuracy.to_frame())
    assert one.delta_accuracy.to_frame()["delta_high"].notna().any()
    for name in ("en-de:system/accuracy", "zh-en:system/accuracy"):
        a = next(m for m in one.measures if m["task"] == name)
        b = next(m for m in two.measures if m["task"] == name)
        assert json.dumps(a) == json.dumps(b)  # NaN written alike


def test_audit_consistency_on_system_level_data_is_a_note_not_a_crash(capsys):
    """System-level scores (one input per language pair) have no random halves: the audit said so only after an
    internal error (numpy's 'Cannot take a larger sample than population') before."""
    argv = ["mt", "audit", "--dataset", "de-en=wmt19-da-sys", "--metric", "sacrebleu-bleu", "--metric",
            "sacrebleu-chrf", "--metric", "ter", "--task", "system/accuracy", "--consistency", "3", "--n-resamples",
            "20", "--accuracy-target", "0.9", "--format", "json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert "de-en: no ranking consistency (fewer than 4 segments: no random halves to draw)" in out["notes"]
    assert all(m["subsamples"] == 0 for m in out["measures"])
