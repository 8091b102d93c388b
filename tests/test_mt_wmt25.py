"""WMT25 (mt-metrics-eval ``tasks.WMT25``) against an oracle written from mt-metrics-eval's definitions, on the
WMT20 MQM data with synthetic metrics; protocols from TOML files; a gold per language pair.

The oracle: per language pair, SPA (Thompson et al. 2024; mt-metrics-eval ``pce.compute_pairwise_p_values``,
``p = #{null >= delta} / R`` from sign flips of the segment differences, ``SPA = 1 - mean |p_h - p_m|`` over
the system pairs) and item-grouped acc23 (``KendallWithTiesOpt``, ``sample_rate = 1``), equal weights, both
statistics in [0, 1] and averaged as they are (``TaskResults.range``); the gold is ``mqm`` for en-ko_KR and
ja-zh_CN and ``esa-human1`` elsewhere (``meta_info.py``).
"""
import numpy as np
import pytest

import metaeval as me
from metaeval.errors import InputFileError, ParameterError
from test_mt_protocol import _acc23, _synthetic, _wmt20


def _spa_oracle(x, z, rng, r):
    """SPA of one metric x (N, M) against z from its definition, with its own R sign vectors."""
    n, m = z.shape
    signs = rng.choice([-1, 1], size=(r, m))

    def pvalues(s):
        out = {}
        for a in range(n):
            for b in range(a + 1, n):
                d = (s[a] - s[b]).astype(np.float64)
                out[a, b] = np.mean(signs @ d >= d.sum())
        return out

    px, pz = pvalues(x), pvalues(z)
    return 1 - np.mean([abs(px[k] - pz[k]) for k in pz])


@pytest.fixture(scope="module")
def wmt25_data(shared_data):
    """en-ko_KR (gold mqm) from WMT20 en-de, cs-uk_UA (gold esa-human1, an ESA-like 0-100 rescoring) from zh-en."""
    data, complete = {}, {}
    rng = np.random.default_rng(7)
    for (lp, short, seed) in (("en-ko_KR", "ende", 1), ("cs-uk_UA", "zhen", 2)):
        mqm, systems, segs = _wmt20(shared_data, short)
        keep = np.isfinite(mqm).all(axis=0)
        mqm, segs = mqm[:, keep][:, :300], [s for s, k in zip(segs, keep) if k][:300]
        metrics = {k: v for k, v in _synthetic(mqm, seed).items() if k in "ACDE"}
        esa = np.clip(np.round(100 + 4 * mqm + rng.normal(scale=5, size=mqm.shape)), 0, 100)
        mats = {"mqm": mqm, "esa-human1": esa, **metrics}
        data[lp] = me.ScoreSet.from_matrices(mats, systems=systems, inputs=segs, humans=["mqm", "esa-human1"],
                                             name=lp)
        complete[lp] = mats
    return data, complete


def test_wmt25_equals_the_oracle(wmt25_data):
    data, mats = wmt25_data
    res = me.mt_evaluate(data, protocol="wmt25", n_resamples=20, spa_permutations=4000, rng=0)
    assert res.gold == {"en-ko_KR": "mqm", "cs-uk_UA": "esa-human1"}
    assert res.tasks == ("en-ko_KR:system/soft-accuracy", "en-ko_KR:summary/acc23", "cs-uk_UA:system/soft-accuracy",
                         "cs-uk_UA:summary/acc23")
    assert res.weights["pooled"] == (0.25,) * 4 and res.weights["en-ko_KR"] == (0.5, 0.5)
    rng = np.random.default_rng(11)
    for lp, gold in res.gold.items():
        z = mats[lp][gold]
        for i, metric in enumerate(res.metrics):
            acc, eps = _acc23(mats[lp][metric], z)
            assert res.statistics[res.tasks.index(f"{lp}:summary/acc23"), i] == pytest.approx(acc, abs=1e-12)
            assert res.tie_thresholds[f"{lp}:summary/acc23"][i] == eps
            # SPA from independent sign draws: equal within Monte Carlo error (R = 4000 each)
            spa = _spa_oracle(mats[lp][metric], z, rng, 4000)
            assert res.statistics[res.tasks.index(f"{lp}:system/soft-accuracy"), i] == pytest.approx(spa, abs=0.01)
    # the averages: the statistics as they are, equal weights (mt-metrics-eval AverageCorrs with range (0, 1))
    np.testing.assert_allclose(res.averages["pooled"], res.statistics.mean(axis=0), rtol=0, atol=1e-15)
    # a gold per language pair from the command line's --human LP=NAME: here the API's mapping
    other = me.mt_evaluate(data, protocol="wmt25", human={"cs-uk_UA": "mqm"}, n_resamples=20, spa_permutations=200,
                           rng=0)
    assert other.gold == {"en-ko_KR": "mqm", "cs-uk_UA": "mqm"}
    acc = _acc23(mats["cs-uk_UA"]["A"], mats["cs-uk_UA"]["mqm"])[0]
    assert other.statistics[other.tasks.index("cs-uk_UA:summary/acc23"), 0] == pytest.approx(acc, abs=1e-12)


def test_wmt25_gold_missing_for_a_language_pair(wmt25_data):
    data, _ = wmt25_data
    no_esa = {lp: ds.subset(scorers=[s for s in ds.scorers if s != "esa-human1"]) for lp, ds in data.items()}
    with pytest.raises(ParameterError) as err:
        me.mt_evaluate(no_esa, protocol="wmt25", n_resamples=20)
    assert str(err.value) == ("`human`: the gold of language pair 'cs-uk_UA' must be one of its scorers; got "
                              "'esa-human1' (the protocol 'wmt25' chose it) (its human scorers: 'mqm'; name one with"
                              " human={'cs-uk_UA': NAME} or --human cs-uk_UA=NAME).")


def test_protocol_from_toml(wmt25_data, tmp_path, capsys):
    from metaeval.cli.main import main

    data, _ = wmt25_data
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\nrescaling = "none"\nhuman = "mqm"\n\n[[task]]\nlevel = "system"\n'
                    'statistic = "pearson"\nweight = 3\n\n[[task]]\nlevel = "summary"\nstatistic = "acc23"\n')
    proto = me.load_protocol(path)
    assert [t.name for t in proto.tasks] == ["system/pearson", "summary/acc23"]
    res = me.mt_evaluate(data, protocol=path, n_resamples=20, rng=0)
    assert res.protocol == "mine" and res.weights["en-ko_KR"] == (0.75, 0.25)
    t = [res.tasks.index(f"en-ko_KR:{n}") for n in ("system/pearson", "summary/acc23")]
    np.testing.assert_allclose(res.averages["en-ko_KR"], 0.75 * res.statistics[t[0]] + 0.25 * res.statistics[t[1]])
    assert main(["mt", "--show-protocol", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "system/pearson" in shown and "weight 3 (0.75)" in shown
    assert main(["mt", "--show-protocol", "wmt25"]) == 0
    assert "gold: esa-human1; en-ko_KR: mqm, ja-zh_CN: mqm" in capsys.readouterr().out


@pytest.mark.parametrize("text, message", [
    ('name = "x"\nweights = 1\n[[task]]\nlevel = "system"\nstatistic = "pearson"\n',
     "unknown key 'weights'; a protocol has the keys name, description, task, rescaling, pooled_weight, significance,"
     " human_ties, pvalue, human, gold."),
    ('name = "x"\n[[task]]\nlevel = "system"\nstatistic = "pearson"\ngrouping = "item"\n',
     "task 1: unknown key 'grouping'; a task has the keys level, statistic, weight."),
    ('name = "x"\n[[task]]\nlevel = "summary"\nstatistic = "soft-accuracy"\n',
     "task 1: `task`: 'soft-accuracy' is defined at level 'system' only; got 'summary/soft-accuracy'."),
    ('name = "x"\n[[task]]\nlevel = "system"\nstatistic = "pearson"\nweight = -1\n',
     "task 1: `weight` must be a positive number; got -1."),
    ('name = "x"\nrescaling = "minmax"\n[[task]]\nlevel = "system"\nstatistic = "pearson"\n',
     "`rescaling` must be one of 'wmt', 'none'; got 'minmax'."),
    ('name = "x"\n', "`task` must be a non-empty list of [[task]] tables; got None."),
    ('name = \n', None),
])
def test_protocol_file_mistakes_are_one_line_errors(tmp_path, capsys, text, message):
    from metaeval.cli.main import main

    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputFileError) as err:
        me.load_protocol(path)
    if message is not None:
        assert str(err.value) == f"{path}: {message}"
    assert main(["mt", "--show-protocol", str(path)]) == 2
    err_text = capsys.readouterr().err.strip()
    assert err_text.startswith(f"metaeval: error: {path}: ") and "\n" not in err_text


def test_cli_wmt25_with_a_gold_per_language_pair(wmt25_data, tmp_path, capsys):
    from metaeval.cli.main import main
    import json

    data, _ = wmt25_data
    argv = ["mt", "--protocol", "wmt25", "--n-resamples", "20", "--format", "json"]
    for lp, ds in data.items():
        me.write_scores(ds, tmp_path / f"{lp}.csv")
        argv += ["--scores", f"{lp}={tmp_path / f'{lp}.csv'}"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["gold"] == {"en-ko_KR": "mqm", "cs-uk_UA": "esa-human1"}
    assert "human:en-ko_KR=mqm,cs-uk_UA=esa-human1" in out["signature"]
    assert main([*argv, "--human", "cs-uk_UA=mqm"]) == 0
    assert json.loads(capsys.readouterr().out)["gold"] == {"en-ko_KR": "mqm", "cs-uk_UA": "mqm"}
    assert main([*argv, "--human", "fr-de=mqm"]) == 2
    assert capsys.readouterr().err.strip() == ("metaeval: error: `--human` must name language pairs of the data "
                                               "('en-ko_KR', 'cs-uk_UA') in LP=NAME; got 'fr-de'.")
