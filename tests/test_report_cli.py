"""`metaeval report` and the paper formats of `metaeval correlate` / `compare`."""
from __future__ import annotations

import json
import shlex

import numpy as np
import pandas as pd
import pytest

from metaeval.cli.main import main

METRICS = ["--metric", "rouge-1.recall", "--metric", "rouge-2.recall", "--metric", "bertscore.recall"]


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_report_writes_page_and_data(tmp_path, capsys):
    target = tmp_path / "out" / "summeval.html"
    code, out, err = run(["report", "--dataset", "summeval", *METRICS, "--n-resamples", "60", "--repetitions", "10",
                          "--output", str(target)], capsys)
    assert code == 0, err
    assert sorted(p.name for p in target.parent.iterdir()) == [
        "comparison.csv", "correlations.csv", "results.json", "summeval.html"]
    assert "rank" in out and "bertscore.recall" in out
    # the console wraps at its width: "open" and a long URI (a deep temporary directory, pytest-xdist's) on two lines
    assert f"open{target.resolve().as_uri()}" in "".join(out.split())
    payload = json.loads((target.parent / "results.json").read_text())
    command = payload["command"]
    assert shlex.split(command)[:6] == ["metaeval", "report", "--dataset", "summeval", "--human", "expert.relevance"]
    assert "--n-resamples 60 --n-repetitions 10 --seed 0" in command and command.endswith(f"--output {target}")
    assert payload["settings"]["preset"] == "default"
    html = target.read_text()
    assert "metaeval report --dataset summeval --human expert.relevance --metric rouge-1.recall" in html


def test_report_command_reproduces_the_page(tmp_path, capsys):
    first = tmp_path / "a"
    code, _, err = run(["report", "--dataset", "summeval", *METRICS, "--quick", "--analysis", "none",
                        "--system", "M0", "--system", "M1", "--system", "M2", "--system", "M5", "--system", "M8",
                        "--output", str(first)], capsys)
    assert code == 0, err
    command = json.loads((first / "results.json").read_text())["command"]
    argv = shlex.split(command)[1:]
    assert "--n-resamples" in argv and argv[argv.index("--n-resamples") + 1] == "200"
    assert argv.count("--system") == 5
    second = tmp_path / "b"
    argv[-1] = str(second)
    code, _, err = run(argv, capsys)
    assert code == 0, err
    strip = lambda text: text.replace(str(first), "X").replace(str(second), "X")  # noqa: E731
    assert strip((first / "report.html").read_text()) == strip((second / "report.html").read_text())


def test_report_on_a_user_file(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = []
    for i in range(10):
        for j in range(6):
            h = i + rng.normal()
            rows.append({"system": f"<s{i}>", "input": f"d{j}", "m|1": h + rng.normal(), "m2": rng.normal(),
                         "relevance": h})
    scores = tmp_path / "my scores.csv"
    pd.DataFrame(rows).to_csv(scores, index=False)
    code, out, err = run(["report", "--scores", str(scores), "--human", "relevance", "--n-resamples", "50",
                          "--repetitions", "5", "--output", str(tmp_path / "out")], capsys)
    assert code == 0, err
    html = (tmp_path / "out" / "report.html").read_text()
    assert "&lt;s0&gt;" in html and "<s0>" not in html
    command = json.loads((tmp_path / "out" / "results.json").read_text())["command"]
    assert f"--scores {shlex.quote(str(scores))} --human relevance" in command


@pytest.mark.parametrize("argv,message", [
    (["--quick", "--full"], "metaeval: error: `--quick` and `--full` must not be given together; got both."),
    (["--analysis", "none", "--analysis", "none"],
     "metaeval: error: `--analysis none` must be given alone; got ['none', 'none']."),
    (["--n-resamples", "0"], "metaeval: error: `n_resamples` must be an integer >= 1; got 0."),
    (["--focus-metric", "rouge-3.f1"],
     "metaeval: error: `focus_metrics` must be among the report's metrics; got 'rouge-3.f1'."),
])
def test_report_errors(tmp_path, capsys, argv, message):
    code, out, err = run(["report", "--dataset", "summeval", *METRICS, *argv, "--output", str(tmp_path / "o")],
                         capsys)
    assert code == 2
    assert err.strip() == message
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("fmt,first", [
    ("latex", r"\begin{tabular}{lrrrrrr}"),
    ("markdown", "| metric | system pearson | system spearman | system kendall-b | summary pearson |"),
])
def test_correlate_paper_formats(capsys, fmt, first):
    code, out, err = run(["correlate", "--dataset", "summeval", "--metric", "rouge-2.recall", "--n-resamples", "30",
                          "--format", fmt], capsys)
    assert code == 0, err
    assert out.splitlines()[0].startswith(first)


def test_compare_markdown(capsys):
    code, out, err = run(["compare", "--dataset", "summeval", *METRICS, "--n-resamples", "50", "--format",
                          "markdown"], capsys)
    assert code == 0, err
    assert out.splitlines()[:2] == ["| Rank | Positions | # | Metric | kendall-b | Better than |",
                                    "|---:|---:|---:|:---|---:|:---|"]
