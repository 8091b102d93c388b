"""`metaeval delta|stability|topk|normality|gap|plan`: one call each on packaged REALSumm, formats, errors."""
from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from metaeval.cli.main import main

METRICS = ["--metric", "rouge-1.recall", "--metric", "rouge-2.recall", "--metric", "rouge-l.recall",
           "--metric", "bertscore.recall", "--metric", "js-2"]


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_delta_grid_json_and_curve_csv(tmp_path, capsys):
    target = tmp_path / "delta.json"
    code, out, err = run(["delta", "--dataset", "realsumm", *METRICS, "--n-resamples", "50", "--format", "json",
                          "--output", str(target)], capsys)
    assert code == 0, err
    payload = json.loads(target.read_text())
    assert payload["analysis"] == "delta" and len(payload["cells"]) == 5 * 55
    assert "seed:0" in payload["signature"]
    code, out, err = run(["delta", "--dataset", "realsumm", *METRICS, "--n-resamples", "0", "--view", "curve",
                          "--format", "csv"], capsys)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert len(frame) == 50 and frame["n_pairs"].max() == 276


def test_delta_table(capsys):
    code, out, err = run(["delta", "--dataset", "realsumm", "--metric", "rouge-2.recall", "--n-resamples", "20",
                          "--fractions", "0.5,1"], capsys)
    assert code == 0, err
    assert "rouge-2.recall: Kendall tau of the" in out and "n=138" in out


def test_stability_and_variance(capsys):
    code, out, err = run(["stability", "--dataset", "realsumm", *METRICS, "--sizes", "5,50", "--n-repetitions",
                          "30", "--format", "csv"], capsys)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert len(frame) == 6 * 2 and frame["scorer"].iloc[0] == "litepyramid.recall"
    code, out, err = run(["stability", "--dataset", "realsumm", "--metric", "rouge-1.recall", "--analysis",
                          "variance", "--n-resamples", "20"], capsys)
    assert code == 0, err
    assert "M_test == M_jud" in err and "boot-both" in out


def test_topk_table(capsys):
    code, out, err = run(["topk", "--dataset", "realsumm", *METRICS, "--n-resamples", "30"], capsys)
    assert code == 0, err
    assert "over the top-k systems by human score" in out and "top 3 by human score:" in out


def test_normality_json(capsys):
    code, out, err = run(["normality", "--dataset", "realsumm", "--metric", "rouge-1.recall", "--format", "json"],
                         capsys)
    assert code == 0, err
    payload = json.loads(out)
    assert [row["scorer"] for row in payload["scorers"]] == ["litepyramid.recall", "rouge-1.recall"]


def test_gap_answers_a_half_point_question(capsys):
    code, out, err = run(["gap", "--dataset", "summeval", "--metric", "rouge-1.recall", "--delta", "0.5",
                          "--n-resamples", "50", "--format", "json"], capsys)
    assert code == 0, err
    [answer] = json.loads(out)["answers"]
    assert answer["delta"] == 0.5 and answer["low"] <= answer["probability"] <= answer["high"]
    code, out, err = run(["gap", "--dataset", "realsumm", "--metric", "rouge-1.recall", "--delta", "0.5",
                          "--n-resamples", "0"], capsys)
    assert code == 0 and "extrapolat" in err and "extrapolated" in out


def test_plan(capsys):
    code, out, err = run(["plan", "--dataset", "realsumm", "--metric", "rouge-2.recall", "--metric", "js-2",
                          "--n-inputs", "25,50", "--n-repetitions", "3", "--n-resamples", "30", "--target-width",
                          "0.3", "--format", "csv"], capsys)
    assert code == 0, err
    assert pd.read_csv(io.StringIO(out))["n_inputs"].tolist() == [25, 50]


@pytest.mark.parametrize("argv,message", [
    (["plan", "--dataset", "realsumm", "--metric", "a", "--metric", "b", "--metric", "c"],
     "metaeval: error: `--metric` must be given once or twice (metric, optional second metric); got 3 times.\n"),
    (["delta", "--dataset", "realsumm", "--metric", "rouge-1.recall", "--fractions", "0.5,0.2"],
     "metaeval: error: `fractions` must be a non-empty, strictly increasing list of numbers in (0, 1]; got (0.5, 0.2).\n"),
    (["topk", "--dataset", "realsumm", "--metric", "rouge-1.recall", "--ks", "30"],
     "metaeval: error: `ks` must be a non-empty list of distinct integers between 1 and 24; got (30,).\n"),
])
def test_user_errors_are_one_line_exit_2(argv, message, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and err == message and out == ""


def test_bad_number_list_is_a_usage_error(capsys):
    code, out, err = run(["stability", "--dataset", "realsumm", "--sizes", "5,x"], capsys)
    assert code == 2 and "must be comma-separated integers" in err


PAPER_COMMANDS = [
    ["correlate", "--dataset", "realsumm", "--metric", "rouge-2.recall", "--n-resamples", "20"],
    ["compare", "--dataset", "realsumm", "--metric", "rouge-1.recall", "--metric", "rouge-2.recall",
     "--n-resamples", "20"],
    ["delta", "--dataset", "realsumm", "--metric", "rouge-2.recall", "--n-resamples", "0", "--fractions", "0.5,1"],
    ["topk", "--dataset", "realsumm", "--metric", "rouge-2.recall", "--n-resamples", "0", "--ks", "5,10"],
    ["normality", "--dataset", "realsumm", "--metric", "rouge-1.recall"],
    ["systems", "--dataset", "realsumm", "--n-resamples", "20"],
    ["verdicts", "--dataset", "realsumm", "--metric", "rouge-2.recall", "--n-resamples", "20"],
]


@pytest.mark.parametrize("fmt", ["latex", "markdown"])
@pytest.mark.parametrize("argv", PAPER_COMMANDS, ids=lambda argv: argv[0])
def test_every_table_command_writes_every_paper_format(argv, fmt, capsys):
    code, out, err = run([*argv, "--format", fmt], capsys)
    assert code == 0, err
    if fmt == "latex":
        assert "\\toprule" in out and "\\bottomrule" in out
    else:
        assert out.startswith("| ") and "|---" in out.replace(":---", "---")
    assert "signature" in out


def test_systems_under_a_given_scorer_needs_no_human(tmp_path, capsys):
    """Comparing systems under a metric (`--scorer`) works on a score file without human scores; without
    `--scorer` the human is the default scorer and its absence is the one-line error."""
    rows = [f"{s},{i},{v}" for s, base in (("A", 0.2), ("B", 0.5), ("C", 0.8)) for i, v in
            enumerate(base + 0.01 * (k % 3) for k in range(6))]
    path = tmp_path / "metric.csv"
    path.write_text("system,input,bleu\n" + "\n".join(rows) + "\n")
    code, out, err = run(["systems", "--scores", str(path), "--scorer", "bleu", "--format", "csv",
                          "--n-resamples", "200"], capsys)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert len(frame) == 3 and frame["significant"].all()
    code, out, err = run(["systems", "--scores", str(path)], capsys)
    assert code == 2 and err.startswith("metaeval: error: `--human` must name the human scorer of ") and out == ""
