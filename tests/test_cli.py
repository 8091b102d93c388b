"""The `metaeval` command: outputs, exit codes, one-line errors, no partial output files."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval.cli.main import main


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def good_csv(path: Path, n_systems: int = 12, n_inputs: int = 6) -> Path:
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n_systems):
        for j in range(n_inputs):
            human = i + rng.normal()
            rows.append({"system": f"sys{i}", "input": f"doc{j}", "rouge": human + rng.normal(),
                         "bleu": rng.normal(), "relevance": human})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


# -- happy paths --------------------------------------------------------------------------------

def test_correlate_json_on_user_file(tmp_path, capsys):
    scores = good_csv(tmp_path / "s.csv")
    out_file = tmp_path / "out.json"
    code, out, err = run(["correlate", "--scores", str(scores), "--human", "relevance", "--metric", "rouge",
                          "--level", "system", "--coefficient", "pearson", "--ci", "boot-both",
                          "--n-resamples", "200", "--format", "json", "--output", str(out_file)], capsys)
    assert code == 0, err
    payload = json.loads(out_file.read_text())
    [result] = payload["results"]
    assert result["metric"] == "rouge" and result["level"] == "system" and result["coefficient"] == "pearson"
    assert result["ci_low"] <= result["statistic"] <= result["ci_high"]
    assert "seed:0" in result["signature"]


def test_correlate_csv_to_stdout(tmp_path, capsys):
    scores = good_csv(tmp_path / "s.csv")
    code, out, err = run(["correlate", "--scores", str(scores), "--human", "relevance", "--ci", "none",
                          "--format", "csv"], capsys)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert set(frame["metric"]) == {"rouge", "bleu"}
    assert len(frame) == 2 * 2 * 3


def test_compare_table_on_packaged_dataset(capsys):
    code, out, err = run(["compare", "--dataset", "summeval", "--metric", "rouge-1.recall", "--metric",
                          "rouge-2.recall", "--metric", "bertscore.recall", "--n-resamples", "200"], capsys)
    assert code == 0, err
    assert "bertscore.recall" in out and "rank" in out


def test_datasets_list_show_export(tmp_path, capsys):
    code, out, _ = run(["datasets", "list"], capsys)
    assert code == 0 and "summeval" in out and "realsumm" in out
    code, out, _ = run(["datasets", "show", "realsumm", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["scoreset"]["systems"] == 24
    target = tmp_path / "realsumm.csv"
    code, out, _ = run(["datasets", "export", "realsumm", "--output", str(target)], capsys)
    assert code == 0
    code, out, err = run(["correlate", "--scores", str(target), "--human", "litepyramid.recall",
                          "--metric", "rouge-2.recall", "--ci", "none", "--format", "json"], capsys)
    assert code == 0, err


def test_report_writes_three_files(tmp_path, capsys):
    code, out, err = run(["report", "--dataset", "summeval", "--metric", "rouge-1.recall", "--metric",
                          "rouge-2.recall", "--metric", "bertscore.recall", "--n-resamples", "100",
                          "--output", str(tmp_path / "rep")], capsys)
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == [
        "comparison.csv", "correlations.csv", "report.html", "results.json"]


def test_console_script_entry_point_exit_code(tmp_path):
    missing = tmp_path / "missing.csv"
    proc = subprocess.run([sys.executable, "-m", "metaeval.cli.main", "correlate", "--scores", str(missing),
                           "--human", "h"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# -- bad input: one line, exit 2, no traceback, no partial output -------------------------------

def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


BAD_FILES = {
    "empty": ("s.csv", ""),
    "header only": ("s.csv", "system,input,rouge,relevance\n"),
    "no system column": ("s.csv", "sys,input,rouge,relevance\na,d1,1,2\n"),
    "no input column": ("s.csv", "system,doc,rouge,relevance\na,d1,1,2\n"),
    "duplicate row": ("s.csv", "system,input,rouge,relevance\na,d1,1,2\na,d1,1,2\nb,d1,1,2\nc,d1,2,3\n"),
    "non-numeric score": ("s.csv", "system,input,rouge,relevance\na,d1,1,2\nb,d1,abc,2\nc,d1,2,3\n"),
    "infinite score": ("s.csv", "system,input,rouge,relevance\na,d1,1,2\nb,d1,inf,2\nc,d1,2,3\n"),
    "malformed json line": ("s.jsonl", '{"system": "a", "input": "d1", "rouge": 1, "relevance": 2}\n{"system": \n'),
    "long form duplicate": ("s.csv", "system,input,scorer,score\na,d1,rouge,1\na,d1,rouge,2\n"),
    "unknown extension": ("s.xlsx", "whatever"),
    "bad parquet": ("s.parquet", "not a parquet file"),
    "json not an object": ("s.jsonl", "[1, 2, 3]\n"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_file_gives_one_line_and_exit_2(tmp_path, capsys, case):
    name, text = BAD_FILES[case]
    scores = write(tmp_path / name, text)
    output = tmp_path / "out.json"
    code, out, err = run(["correlate", "--scores", str(scores), "--human", "relevance", "--format", "json",
                          "--output", str(output)], capsys)
    assert code == 2, (case, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("metaeval: error: ") and str(scores) in lines[0]
    assert "Traceback" not in err
    assert not output.exists()
    assert list(tmp_path.iterdir()) == [scores]


def test_level_with_too_few_systems(tmp_path, capsys):
    scores = good_csv(tmp_path / "s.csv", n_systems=2)
    output = tmp_path / "out.json"
    code, out, err = run(["correlate", "--scores", str(scores), "--human", "relevance", "--output", str(output),
                          "--format", "json"], capsys)
    assert code == 2
    assert err.strip() == f"metaeval: error: {scores}: a system-level correlation needs at least 3 systems; got 2."
    assert not output.exists()


def test_unknown_scorer(tmp_path, capsys):
    scores = good_csv(tmp_path / "s.csv")
    code, out, err = run(["correlate", "--scores", str(scores), "--human", "relevance", "--metric", "nope"], capsys)
    assert code == 2
    assert err.strip().startswith(f"metaeval: error: {scores}: `--metric` must name a scorer of this ScoreSet (")
    assert err.strip().endswith("; got 'nope'.")


def test_unknown_human(tmp_path, capsys):
    scores = good_csv(tmp_path / "s.csv")
    code, out, err = run(["correlate", "--scores", str(scores), "--human", "nope"], capsys)
    assert code == 2 and "`--human` must name a scorer" in err and len(err.strip().splitlines()) == 1


def test_missing_file(tmp_path, capsys):
    code, out, err = run(["correlate", "--scores", str(tmp_path / "none.csv"), "--human", "h"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "none.csv" in err


def test_dataset_and_scores_that_match_nothing(tmp_path, capsys):
    # --dataset and --scores are joined on (system, input); a file whose labels match nothing is an error
    scores = good_csv(tmp_path / "s.csv")
    code, out, err = run(["correlate", "--dataset", "summeval", "--scores", str(scores)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.strip().startswith("metaeval: error: the join of summeval and s on (system, input) must match at"
                                  " least one cell; got none (systems 'M0', 'M1', 'M2', ... (13 more) vs")


def test_unknown_dataset(capsys):
    code, out, err = run(["correlate", "--dataset", "nope"], capsys)
    assert code == 2 and "`name` must be one of" in err and len(err.strip().splitlines()) == 1


def test_bad_choice_is_a_usage_error(capsys):
    code, out, err = run(["correlate", "--dataset", "summeval", "--level", "document"], capsys)
    assert code == 2 and "Traceback" not in err


def test_bad_dataset_option(capsys):
    code, out, err = run(["correlate", "--dataset", "summeval", "--dataset-option", "oops"], capsys)
    assert code == 2
    assert err.strip() == "metaeval: error: `--dataset-option` must look like KEY=VALUE; got 'oops'."


def test_human_needed_for_user_file_without_humans(tmp_path, capsys):
    scores = good_csv(tmp_path / "s.csv")
    code, out, err = run(["correlate", "--scores", str(scores)], capsys)
    assert code == 2
    assert err.strip() == (f"metaeval: error: `--human` must name the human scorer of {scores}; got none, and the"
                           " file marks 0 scorers as human (none).")


def test_lazy_command_list_matches_each_commands_own_help():
    import importlib

    from metaeval.cli import main as cli_main

    for name, (module, attribute, short_help) in cli_main.COMMANDS.items():
        command = getattr(importlib.import_module(f"metaeval.cli.{module}"), attribute)
        assert command.name == name
        assert short_help == command.get_short_help_str(limit=cli_main.SHORT_HELP_LIMIT)
