"""`metaeval mt` on the command line (issue 21 items 5, 8, 11): score files read as `correlate` reads them
(several files per language pair, per-file columns and --where), paper tables, messages that name the flags."""
import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import metaeval as me
from metaeval.cli.main import main
from metaeval.mt.result import MtEvaluationResult
from metaeval.report.formats import to_paper

LPS = {"en-de": "ende", "zh-en": "zhen"}


@pytest.fixture
def wmt_files(shared_data, tmp_path, monkeypatch):
    """The real WMT20 MQM TSVs (``<lp>.tsv``: system, mqm_avg_score, seg_id) and one generated metric file for
    both language pairs (``metrics.csv``: lp, system, seg_id, good, noisy); the test runs in that directory."""
    rng = np.random.default_rng(0)
    frames = []
    for lp, short in LPS.items():
        mqm = pd.read_csv(shared_data / "wmt" / f"mqm_newstest2020_{short}.avg_seg_scores.tsv", sep=r"\s+")
        mqm.to_csv(tmp_path / f"{lp}.tsv", sep="\t", index=False)
        frames.append(mqm.assign(lp=lp, good=mqm.mqm_avg_score + rng.normal(scale=2, size=len(mqm)),
                                 noisy=mqm.mqm_avg_score + rng.normal(scale=8, size=len(mqm)))
                      [["lp", "system", "seg_id", "good", "noisy"]])
    pd.concat(frames).to_csv(tmp_path / "metrics.csv", index=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _joined(lp):
    """The language pair's human and metric scores joined by pandas (the oracle of the CLI's reading)."""
    mqm = pd.read_csv(f"{lp}.tsv", sep="\t")
    metrics = pd.read_csv("metrics.csv").query("lp == @lp")
    return mqm.merge(metrics, on=["system", "seg_id"]).dropna()


def _two_lps(*extra):
    return ["mt", "--scores", "en-de=en-de.tsv", "--scores", "en-de=metrics.csv", "--scores", "zh-en=zh-en.tsv",
            "--scores", "zh-en=./metrics.csv", "--input-column", "seg_id", "--where", "metrics.csv=lp=en-de",
            "--where", "./metrics.csv=lp=zh-en", "--human", "mqm_avg_score", *extra]


def test_mt_joins_an_mqm_tsv_and_a_metric_file_per_language_pair(wmt_files, capsys):
    argv = ["mt", "--scores", "en-de=en-de.tsv", "--scores", "en-de=metrics.csv", "--input-column", "en-de.tsv=seg_id",
            "--input-column", "metrics.csv=seg_id", "--where", "metrics.csv=lp=en-de", "--human", "mqm_avg_score",
            "--task", "system/pearson", "--task", "global/pearson", "--exclude-system", "Human-B.0",
            "--n-resamples", "50", "--format", "json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["language_pairs"] == ["en-de"] and out["metrics"] == ["good", "noisy"]
    joined = _joined("en-de").query("system != 'Human-B.0'")
    means = joined.groupby("system")[["mqm_avg_score", "good", "noisy"]].mean()
    for i, metric in enumerate(out["metrics"]):
        assert out["statistics"][0][i] == pytest.approx(scipy.stats.pearsonr(means[metric], means.mqm_avg_score)[0])
        assert out["statistics"][1][i] == pytest.approx(scipy.stats.pearsonr(joined[metric], joined.mqm_avg_score)[0])
    assert out["n_segments"] == {"en-de": joined.seg_id.nunique()}


def test_mt_two_language_pairs_each_file_option_stays_with_its_file(wmt_files, capsys):
    assert main(_two_lps("--task", "system/pearson", "--n-resamples", "50", "--format", "json")) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["language_pairs"] == ["en-de", "zh-en"]
    for t, lp in enumerate(out["language_pairs"]):  # zh-en read the zh-en rows, not those of en-de's --where
        means = _joined(lp).groupby("system")[["mqm_avg_score", "good"]].mean()
        assert out["statistics"][t][0] == pytest.approx(scipy.stats.pearsonr(means.good, means.mqm_avg_score)[0])
    # the same path for both language pairs gets the same --where: zh-en then has no segment of its systems
    assert main(["mt", "--scores", "en-de=en-de.tsv", "--scores", "en-de=metrics.csv", "--scores", "zh-en=zh-en.tsv",
                 "--scores", "zh-en=metrics.csv", "--input-column", "seg_id", "--where", "metrics.csv=lp=en-de",
                 "--human", "mqm_avg_score"]) == 2
    # the join of zh-en's human with en-de's metric rows pairs the wrong systems: refused before any number
    assert capsys.readouterr().err.startswith(
        "metaeval: error: the join of zh-en and metrics must pair the same systems; got systems unmatched on both"
        " sides (8 of zh-en: 'DeepMind.381', 'DiDi_NLP.401', 'Huoshan_Translate.919', ... (5 more); 8 of metrics:")


def test_mt_terminal_table_fits_80_columns_without_na(wmt_files, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(_two_lps("--n-resamples", "50")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 80
    assert all(line == line.rstrip() for line in lines)
    assert not any("n/a" in line for line in lines)  # the pooled ranking shows its own tasks only
    assert "pooled over the language pairs" in lines


@pytest.mark.parametrize("argv, message", [
    (["--task", "system/pearson", "--human", "mqm_avg"],
     "`--human`: the gold of language pair 'en-de' must be one of its scorers; got 'mqm_avg' (did you mean"
     " 'mqm_avg_score'?) (its human scorers: none; its scorers: 'good', 'noisy', 'mqm_avg_score'; name one with"
     " --human en-de=NAME or --human NAME)."),
    (["--human", "mqm_avg_score", "--metric", "God"],
     "metrics.csv, en-de.tsv: `--metric` must name a scorer of this ScoreSet ('good', 'noisy', 'mqm_avg_score'); got 'God' (did you mean"
     " 'good'?)."),
    (["--human", "mqm_avg_score", "--exclude-system", "Human-A"],
     "`--exclude-system` must name a system of the data or 'LP=SYSTEM'; got 'Human-A' (did you mean 'Human-A.0'?)."),
])
def test_mt_messages_name_the_flags(wmt_files, capsys, argv, message):
    base = ["mt", "--scores", "en-de=metrics.csv", "--scores", "en-de=en-de.tsv", "--input-column", "seg_id",
            "--where", "metrics.csv=lp=en-de"]
    assert main(base + argv) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"metaeval: error: {message}"
    assert "None" not in err and "Traceback" not in err


def test_mt_messages_without_a_human(wmt_files, capsys):
    assert main(["mt", "--scores", "en-de=metrics.csv", "--input-column", "seg_id", "--where", "lp=en-de"]) == 2
    assert capsys.readouterr().err.strip() == (
        "metaeval: error: `--human` must name the human scorer of metrics.csv; got none, and the file marks 0 scorers"
        " as human (none).")
    assert main(["mt", "--scores", "en-de=en-de.tsv", "--scores", "en-de=en-de.tsv"]) == 2
    assert capsys.readouterr().err.strip() == (
        "metaeval: error: `--scores` must give a file once per language pair; got 'en-de.tsv' twice for 'en-de'.")


def _write_mtme(root, humans=("mqm",)):
    rng = np.random.default_rng(0)
    (root / "human-scores").mkdir(parents=True)
    (root / "metric-scores" / "en-de").mkdir(parents=True)
    systems = ["sysA", "sysB", "sysC", "Human-A.0"]
    for name in humans:
        (root / "human-scores" / f"en-de.{name}.seg.score").write_text(
            "".join(f"{s}\t{v!r}\n" for s in systems for v in rng.normal(size=6).tolist()))
    (root / "metric-scores" / "en-de" / "BLEU-refA.seg.score").write_text(
        "".join(f"{s}\t{v!r}\n" for s in systems for v in rng.normal(size=6).tolist()))


def test_mt_metrics_eval_messages_name_the_flags(tmp_path, capsys):
    root = tmp_path / "wmtx"
    _write_mtme(root, humans=("mqm", "psqm"))
    base = ["mt", "--mt-metrics-eval", str(root), "--language-pair", "en-de"]
    assert main(base) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("metaeval: error: `--human` must name the human scorer; got none, and the data marks 2 scorers as"
                   " human ('mqm', 'psqm').")
    assert main([*base, "--human", "mqm", "--exclude-system", "Human-A"]) == 2
    assert capsys.readouterr().err.strip() == (
        "metaeval: error: `--exclude-system` must name a system of the data or 'LP=SYSTEM'; got 'Human-A' (did you"
        " mean 'Human-A.0'?).")
    assert main([*base, "--input-column", "seg_id"]) == 2
    assert capsys.readouterr().err.strip() == (
        "metaeval: error: `--input-column` must come with `--scores`; got it with --mt-metrics-eval (its files have"
        " a fixed layout).")
    assert main([*base, "--human", "mqm", "--allow-unmatched"]) == 2
    assert capsys.readouterr().err.strip() == (
        "metaeval: error: `--allow-unmatched` must come with `--scores`; got it with --mt-metrics-eval (every file of"
        " a language pair has its one list of segments: nothing is joined).")


def test_mt_refuses_resamples_beyond_memory(wmt_files, tmp_path, capsys, monkeypatch):
    from metaeval import _validation as iv

    monkeypatch.setattr(iv, "available_memory", lambda: 2 ** 20)
    assert main(_two_lps("--n-resamples", "1000000")) == 2
    assert capsys.readouterr().err.startswith(
        "metaeval: error: `--n-resamples` must be small enough for the resamples to fit in memory; got 1000000")
    root = tmp_path / "wmtx"
    _write_mtme(root)
    assert main(["mt", "--mt-metrics-eval", str(root), "--language-pair", "en-de", "--n-resamples", "1000000"]) == 2
    assert capsys.readouterr().err.startswith(
        "metaeval: error: `--n-resamples` must be small enough for the resamples to fit in memory; got 1000000")


def _small_result():
    """A hand-made result: two language pairs, two metrics (one with a LaTeX-special name), one task per
    language pair and the pooled accuracy."""
    tasks = ("en-de:system/pearson", "zh-en:system/pearson", "pooled:system/accuracy")
    two = np.array([[1.0, 0.5], [0.5, 1.0]])
    return MtEvaluationResult(
        metrics=("COMET_22", "BLEU"), language_pairs=("en-de", "zh-en"), tasks=tasks,
        statistics=np.array([[0.9, 0.7], [0.8, 0.85], [0.75, 0.5]]), tie_thresholds={},
        scopes=("en-de", "zh-en", "pooled"),
        averages={"en-de": np.array([0.95, 0.85]), "zh-en": np.array([0.9, 0.925]),
                  "pooled": np.array([0.875, 0.75])},
        ranks={"en-de": np.array([1, 2]), "zh-en": np.array([1, 1]), "pooled": np.array([1, 2])},
        pvalues={s: two for s in ("en-de", "zh-en", "pooled")}, ranked_tasks={}, weights={},
        task_pvalues={t: two for t in tasks},
        task_ranks={tasks[0]: np.array([1, 2]), tasks[1]: np.array([1, 1]), tasks[2]: np.array([1, 2])})


def test_mt_latex_table_exact_text():
    assert to_paper(_small_result(), "latex") == r"""\begin{tabular}{llrrr}
\toprule
LP & Metric & Average & system/pearson & system/accuracy \\
\midrule
en-de & COMET\_22 & \textbf{0.950} (1) & \textbf{0.900} & -- \\
 & BLEU & 0.850 (2) & 0.700 & -- \\
\midrule
zh-en & BLEU & \textbf{0.925} (1) & \textbf{0.850} & -- \\
 & COMET\_22 & \textbf{0.900} (1) & \textbf{0.800} & -- \\
\midrule
pooled & COMET\_22 & \textbf{0.875} (1) & -- & \textbf{0.750} \\
 & BLEU & 0.750 (2) & -- & 0.500 \\
\bottomrule
\end{tabular}
% average of the tasks (wmt23) with its cluster rank in parentheses; bold: rank 1 (permutation, alpha 0.05) on the average or on that task, and any value equal to a rank-1 value at the printed precision; --: not a task of the scope
"""


def test_mt_markdown_table_exact_text():
    assert to_paper(_small_result(), "markdown") == """\
| LP | Metric | Average | system/pearson | system/accuracy |
|:---|:---|---:|---:|---:|
| en-de | COMET\\_22 | **0.950** (1) | **0.900** | -- |
|  | BLEU | 0.850 (2) | 0.700 | -- |
| zh-en | BLEU | **0.925** (1) | **0.850** | -- |
|  | COMET\\_22 | **0.900** (1) | **0.800** | -- |
| pooled | COMET\\_22 | **0.875** (1) | -- | **0.750** |
|  | BLEU | 0.750 (2) | -- | 0.500 |

average of the tasks (wmt23) with its cluster rank in parentheses; bold: rank 1 (permutation, alpha 0.05) on \
the average or on that task, and any value equal to a rank-1 value at the printed precision; --: not a task of the \
scope
"""


def test_mt_cli_latex_is_the_paper_table(wmt_files, capsys):
    assert main(_two_lps("--n-resamples", "50", "--format", "latex")) == 0
    out = capsys.readouterr().out
    assert out.startswith("\\begin{tabular}{llrrrrr}\n\\toprule\nLP & Metric & Average & system/accuracy &")
    assert out.count("\\midrule\n") == 3 and "n/a" not in out and "% average of the tasks (wmt23)" in out
