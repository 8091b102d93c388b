"""Score files on every command: naming a file's scorer (``--scores NAME=PATH``, ``--rename``, the readers'
``scorer=`` / ``rename=``), the same column options everywhere, and the reading settings passed in the open."""
from __future__ import annotations

import ast
import io
from pathlib import Path

import click
import numpy as np
import pandas as pd
import pytest

import metaeval
import metaeval as me
from metaeval.cli.main import cli, main
from metaeval.errors import InputFileError

SRC = Path(metaeval.__file__).resolve().parent
SYSTEMS = [f"sys{i}" for i in range(6)]


def _files(tmp_path: Path) -> dict[str, Path]:
    """A human file and two COMET-style metric files (system, seg_id, score), as sacreBLEU / COMET write them."""
    rng = np.random.default_rng(0)
    human = rng.normal(size=(6, 8)) + np.arange(6)[:, None]
    rows = [(s, j) for s in range(6) for j in range(8)]
    paths = {}
    for name, values in (("mqm", human), ("comet", human + rng.normal(size=human.shape)),
                         ("bleu", -human + rng.normal(size=human.shape))):
        column = "mqm" if name == "mqm" else "score"
        frame = pd.DataFrame({"system": [SYSTEMS[s] for s, _ in rows], "seg_id": [j for _, j in rows],
                              column: [values[s, j] for s, j in rows]})
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def _run(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


BASE = ["--input-column", "seg_id", "--human", "mqm", "--level", "system", "--coefficient", "pearson", "--ci", "none",
        "--format", "csv"]


def test_scores_name_path_names_the_files_one_scorer(tmp_path, capsys, monkeypatch):
    paths = _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(["correlate", "--scores", "mqm.csv", "--scores", "COMET=comet.csv", "--scores",
                           "BLEU=bleu.csv", *BASE], capsys)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    assert set(frame["metric"]) == {"COMET", "BLEU"}
    comet = frame.loc[frame["metric"] == "COMET", "statistic"].item()
    alone = me.read_scores(paths["comet"], columns={"input": "seg_id"}, scorer="COMET")
    joined = me.read_scores(paths["mqm"], columns={"input": "seg_id"}).merge(alone)
    expected = np.corrcoef(joined.matrix("COMET").mean(axis=1), joined.matrix("mqm").mean(axis=1))[0, 1]
    assert comet == pytest.approx(expected, abs=1e-3)


def test_rename_gives_each_files_scorer_its_name(tmp_path, capsys, monkeypatch):
    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(["correlate", "--scores", "mqm.csv", "--scores", "comet.csv", "--scores", "bleu.csv",
                           "--rename", "comet.csv=score:COMET", "--rename", "bleu.csv=score:BLEU", *BASE], capsys)
    assert code == 0, err
    assert set(pd.read_csv(io.StringIO(out))["metric"]) == {"COMET", "BLEU"}


def test_two_unnamed_score_files_still_cannot_be_joined(tmp_path, capsys, monkeypatch):
    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(["correlate", "--scores", "comet.csv", "--scores", "bleu.csv", *BASE], capsys)
    assert code == 2 and "score" in err


def test_readers_take_scorer_and_rename(tmp_path):
    paths = _files(tmp_path)
    assert me.read_scores(paths["comet"], columns={"input": "seg_id"}, scorer="COMET").scorers == ("COMET",)
    renamed = me.read_scores(paths["comet"], columns={"input": "seg_id"}, rename={"score": "BLEURT"})
    assert renamed.scorers == ("BLEURT",)
    with pytest.raises(InputFileError) as error:
        me.read_scores(paths["comet"], columns={"input": "seg_id"}, rename={"bleu": "BLEU"})
    assert str(error.value) == f"{paths['comet']}, row 1: `rename` must name a scorer of the file ('score'); got 'bleu'."
    two = tmp_path / "two.csv"
    pd.read_csv(paths["comet"]).assign(other=1.0).to_csv(two, index=False)
    with pytest.raises(InputFileError) as error:
        me.read_scores(two, columns={"input": "seg_id"}, scorer="COMET")
    assert str(error.value) == (f"{two}, row 1: `scorer` must name the file's one scorer; got 2 scorers ('score',"
                                " 'other'); rename them with `rename`.")


def test_cli_names_its_flags_in_naming_errors(tmp_path, capsys, monkeypatch):
    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(["correlate", "--scores", "mqm.csv", "--scores", "comet.csv", "--rename", "comet.csv=bleu:X",
                         *BASE], capsys)
    assert code == 2
    assert err.strip() == ("metaeval: error: comet.csv, row 1: `--rename` must name a scorer of the file ('score');"
                           " got 'bleu'.")
    code, _, err = _run(["correlate", "--scores", "mqm.csv", "--rename", "bad", *BASE], capsys)
    assert code == 2 and err.strip() == "metaeval: error: `--rename` must look like [FILE=]OLD:NEW; got 'bad'."


def test_a_file_name_with_an_equals_sign_is_read_and_targeted(tmp_path, capsys, monkeypatch):
    paths = _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    Path("run=1.csv").write_text(paths["comet"].read_text())
    Path("1.csv").write_text(paths["bleu"].read_text())  # run=1.csv exists: it is not NAME=PATH
    code, out, err = _run(["correlate", "--scores", "mqm.csv", "--scores", "run=1.csv", "--rename",
                           "run=1.csv=score:COMET", *BASE], capsys)
    assert code == 0, err
    assert set(pd.read_csv(io.StringIO(out))["metric"]) == {"COMET"}


def test_mt_reads_a_file_whose_name_holds_an_equals_sign(tmp_path, monkeypatch):
    from metaeval.cli.mt_command import _language_pairs
    from metaeval.cli.source import Reading

    paths = _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    frame = pd.read_csv(paths["mqm"]).assign(metric=pd.read_csv(paths["comet"])["score"])
    frame.to_csv("a=b.csv", index=False)
    frame.assign(metric=0.0).to_csv("b.csv", index=False)
    reading = Reading(input_column=("seg_id",))
    data, human = _language_pairs(("a=b.csv",), "mqm", reading, 10)
    assert list(data) == ["a=b"] and data["a=b"].matrix("metric").std() > 0
    data, _ = _language_pairs(("en-de=b.csv",), "mqm", reading, 10)  # LP=PATH: b.csv exists, en-de=b.csv not
    assert list(data) == ["en-de"] and data["en-de"].matrix("metric").std() == 0


def _commands(command=cli, path=("metaeval",), ctx=None):
    yield path, command
    if isinstance(command, click.Group):
        context = click.Context(command, info_name=path[-1], parent=ctx)
        for name in command.list_commands(context):
            yield from _commands(command.get_command(context, name), path + (name,), context)


def test_every_command_that_reads_score_files_takes_the_same_column_options():
    readers = []
    for path, command in _commands():
        names = {p.name for p in command.params}
        if "scores" in names:
            readers.append(" ".join(path))
            missing = {"system_column", "input_column", "annotator_column", "where", "layout", "rename"} - names
            assert not missing, (path, missing)
    assert {"metaeval human agreement", "metaeval human normalize", "metaeval human sample", "metaeval qarla",
            "metaeval mt evaluate", "metaeval mt audit", "metaeval correlate", "metaeval topk"} <= set(readers)


def test_human_commands_map_the_users_columns(tmp_path, capsys):
    rng = np.random.default_rng(1)
    rows = [{"model": f"m{s}", "doc": d, "rater": a, "quality": float(rng.integers(1, 6))}
            for s in range(4) for d in range(5) for a in ("r1", "r2", "r3")]
    path = tmp_path / "ratings.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    code, _, err = _run(["human", "agreement", "--scores", str(path), "--scorer", "quality"], capsys)
    assert code == 2
    assert "(or map the file's own column: --system-column model)" in err and "columns=" not in err
    code, out, err = _run(["human", "agreement", "--scores", str(path), "--scorer", "quality", "--system-column",
                           "model", "--input-column", "doc", "--annotator-column", "rater"], capsys)
    assert code == 0, err
    assert "Krippendorff's alpha (interval)" in out and "over 20 units" in out


def test_qarla_maps_the_human_files_columns(tmp_path, capsys):
    texts = Path(__file__).resolve().parents[2] / "shared" / "data" / "summeval" / "texts.jsonl"
    if not texts.exists():
        pytest.skip("the SummEval texts are not in ../shared/data")
    path = tmp_path / "human.csv"
    ds = me.load_dataset("summeval")
    frame = pd.DataFrame([{"model": s, "doc": i, "coherence": float(ds.matrix("expert.coherence")[a, b])}
                          for a, s in enumerate(ds.systems) for b, i in enumerate(ds.inputs)])
    frame.to_csv(path, index=False)
    code, out, err = _run(["qarla", "--texts", str(texts), "--inputs", "3", "--similarity", "rouge-1",
                           "--scores", str(path), "--system-column", "model", "--input-column", "doc",
                           "--human-column", "coherence", "--format", "json"], capsys)
    assert code == 0, err
    assert '"human": "coherence"' in out


def test_reading_settings_are_parameters_not_ambient_state():
    columns = (SRC / "data" / "columns.py").read_text(encoding="utf-8")
    assert "ContextVar" not in columns and "--system-column" not in columns and "--where" not in columns
    for path in sorted((SRC / "cli").glob("*.py")):
        assert "ContextVar" not in path.read_text(encoding="utf-8"), path.name
    assert "SOURCE_FILE" not in (SRC / "cli" / "main.py").read_text(encoding="utf-8")


def test_a_caller_names_the_reading_options_its_own_way(tmp_path):
    from metaeval.data.columns import API_NAMES, OptionNames

    paths = _files(tmp_path)
    names = OptionNames(**{**{f: getattr(API_NAMES, f) for f in API_NAMES.__dataclass_fields__},
                           "input": "--segment"})
    with pytest.raises(InputFileError) as error:
        me.read_scores(paths["comet"], option_names=names)
    assert "(or map the file's own column: --segment seg_id)" in str(error.value)
    with pytest.raises(InputFileError) as error:
        me.read_scores(paths["comet"])
    assert "columns={'input': 'seg_id'}" in str(error.value)


def test_data_errors_name_the_one_score_file(tmp_path, capsys, monkeypatch):
    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    frame = pd.read_csv("mqm.csv").assign(metric=1.0)
    frame.to_csv("one.csv", index=False)
    code, _, err = _run(["correlate", "--scores", "one.csv", "--input-column", "seg_id", "--human", "mqm",
                         "--metric", "nope"], capsys)
    assert code == 2 and err.startswith("metaeval: error: one.csv: `--metric` must name a scorer")


def test_library_modules_import_no_click():
    for path in sorted(SRC.rglob("*.py")):
        if path.relative_to(SRC).parts[0] == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "click" for a in node.names), path
            elif isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] != "click", path
