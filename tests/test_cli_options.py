"""Every option of the command line is declared once, its flag is its parameter's name, and every --help
page fits 80 columns without a cut word or summary."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest

import metaeval
from metaeval.cli import common
from metaeval.cli.main import cli, main

SRC = Path(metaeval.__file__).resolve().parent


def _calls(path: Path, name: str):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called == name:
                yield node


def test_click_option_is_called_in_one_place():
    calls = [(p.name, c.lineno) for p in sorted((SRC / "cli").glob("*.py")) for c in _calls(p, "option")
             if isinstance(c.func, ast.Attribute) and getattr(c.func.value, "id", "") == "click"]
    assert [name for name, _ in calls] == ["common.py"], calls


def test_every_option_is_declared_once():
    declared = list(common.OPTIONS)
    for path in sorted((SRC / "cli").glob("*.py")):
        declared += [c.args[0].value for c in _calls(path, "declare") if isinstance(c.args[0], ast.Constant)]
    shared = []
    for path in sorted((SRC / "analyses").glob("*.py")):
        for call in _calls(path, "Option"):
            if any(k.arg == "shared" and getattr(k.value, "value", False) for k in call.keywords):
                shared.append(call.args[0].value)
            else:
                declared.append(call.args[0].value)
    repeated = sorted({name for name in declared if declared.count(name) > 1})
    assert not repeated
    assert set(shared) <= set(common.OPTIONS)
    for option in ("coefficient", "confidence_level", "alpha", "output", "format", "scores", "metric"):
        assert option in common.OPTIONS


def _commands(command=cli, path=("metaeval",), ctx=None):
    yield path, command
    if isinstance(command, click.Group):
        context = click.Context(command, info_name=path[-1], parent=ctx)
        for name in command.list_commands(context):
            yield from _commands(command.get_command(context, name), path + (name,), context)


COMMANDS = list(_commands())


@pytest.mark.parametrize("path, command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_flag_names_are_parameter_names(path, command):
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.name == param.opts[0].lstrip("-").replace("-", "_"), param.opts


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("path, command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_fits_80_columns_without_cut_words(path, command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main([*path[1:], "--help"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out
    flat = _words(out)
    for param in command.params:
        if isinstance(param, click.Option) and param.help and not param.hidden:
            assert _words(param.help) in flat, param.opts  # wrapped at spaces only, never shortened
    if isinstance(command, click.Group):
        context = click.Context(command)
        for name in command.list_commands(context):
            assert _words(common.summary(command.get_command(context, name))) in flat, name


def test_main_help_lists_whole_summaries(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["--help"]) == 0
    flat = _words(capsys.readouterr().out)
    for name, (_, _, summary) in cli.lazy.items():
        assert not summary.endswith("...") and _words(summary) in flat, name


@pytest.mark.parametrize("argv", [
    ["familywise", "--systems", "8", "--per-comparison", "0.05"],
    ["human", "agreement", "--dataset", "summeval", "--scorer", "expert.relevance"],
])
def test_outputs_fit_80_columns_and_keep_signature_fields_whole(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80
    start = next(i for i, line in enumerate(lines) if line == "signature:")
    fields = re.split(r"\s*\|", " ".join(lines[start + 1:]))
    assert all(re.fullmatch(r"[a-z_]+:\S*", field) for field in fields), fields


def test_nuggets_tables_keep_names_whole_at_80_columns(capsys, monkeypatch):
    data = Path(__file__).parent / "data" / "nuggets"
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["nuggets", "match", "--nuggets", str(data / "copland_key.csv"), "--texts",
                 str(data / "copland_answers.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80
    assert "NYT19990708.0196" in out and "vital_matched" in out
