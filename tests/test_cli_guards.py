"""An output path that is one of the command's inputs is refused before anything is written (issue 22)."""
from __future__ import annotations

import os

import pytest

from metaeval.cli.main import main
from metaeval.cli.guards import overwritten_input

from test_cli import good_csv


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_correlate_output_equal_to_scores_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    good_csv(tmp_path / "a.csv")
    before = (tmp_path / "a.csv").read_bytes()
    code, out, err = run(["correlate", "--scores", "a.csv", "--human", "relevance", "--output", "a.csv"], capsys)
    assert code == 2
    assert err == ("metaeval: error: --output 'a.csv' is the same file as --scores 'a.csv'; writing it would "
                   "destroy the input: choose another output path\n")
    assert (tmp_path / "a.csv").read_bytes() == before


def test_same_file_through_a_link_or_another_spelling(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    good_csv(tmp_path / "a.csv")
    os.symlink("a.csv", tmp_path / "link.csv")
    code, _, err = run(["correlate", "--scores", "a.csv", "--human", "relevance", "--output", "link.csv"], capsys)
    assert code == 2 and "--output 'link.csv' is the same file as --scores 'a.csv'" in err
    code, _, err = run(["correlate", "--scores", "./a.csv", "--human", "relevance",
                        "--output", str(tmp_path / "a.csv")], capsys)
    assert code == 2 and "is the same file as --scores './a.csv'" in err


def test_report_refuses_a_companion_file_that_is_an_input(tmp_path, capsys):
    good_csv(tmp_path / "results.json")
    code, _, err = run(["report", "--scores", str(tmp_path / "results.json"), "--human", "relevance",
                        "--output", str(tmp_path)], capsys)
    assert code == 2
    assert f"--output {str(tmp_path)!r} would write {str(tmp_path / 'results.json')!r}, the same file as --scores" in err
    assert not (tmp_path / "report.html").exists()


def test_score_output_equal_to_candidates(tmp_path, capsys, examples_dir=None):
    cands = tmp_path / "cands.jsonl"
    cands.write_text('{"system": "a", "input": "1", "candidate": "the cat"}\n')
    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"input": "1", "reference": "the cat sat"}\n')
    before = cands.read_bytes()
    code, _, err = run(["score", "--candidates", str(cands), "--references", str(refs), "--metric", "bleu",
                        "--output", str(cands)], capsys)
    assert code == 2 and "--output" in err and "is the same file as --candidates" in err
    assert cands.read_bytes() == before


def test_key_value_inputs_and_distinct_files_pass(tmp_path):
    good_csv(tmp_path / "a.csv")
    params = {"scores": (f"en-de={tmp_path / 'a.csv'}",), "output": str(tmp_path / "a.csv")}
    assert "is the same file as --scores" in overwritten_input("mt", params)
    assert overwritten_input("mt", {"scores": (str(tmp_path / "a.csv"),), "output": str(tmp_path / "b.csv")}) is None
    assert overwritten_input("correlate", {"scores": (str(tmp_path / "a.csv"),), "output": None}) is None


@pytest.mark.parametrize("flag", ["--output", "--write-scores"])
def test_human_normalize_outputs_are_guarded(tmp_path, capsys, flag):
    good_csv(tmp_path / "a.csv")
    args = ["human", "normalize", "--scores", str(tmp_path / "a.csv"), "--scorer", "relevance",
            flag, str(tmp_path / "a.csv")]
    code, _, err = run(args, capsys)
    assert code == 2 and f"{flag} " in err and "is the same file as --scores" in err


@pytest.mark.parametrize("argv, expected", [
    (["correlate", "--foo"], "metaeval: error: no such option '--foo'. Did you mean '--format'? "
                             "(see 'metaeval correlate --help')\n"),
    (["correlate", "--level", "nope"], "metaeval: error: invalid value for '--level': 'nope' is not one of 'system',"
                                       " 'summary', 'global', 'by-system', 'partial', 'input', 'segment'"
                                       " (see 'metaeval correlate --help')\n"),
    (["bogus"], "metaeval: error: no such command 'bogus' (see 'metaeval --help')\n"),
])
def test_usage_errors_take_one_line(argv, expected, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and err == expected


def _leaf_commands():
    import click

    from metaeval.cli.main import COMMANDS, cli

    ctx = click.Context(cli)
    out = []

    def walk(command, path):
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), [*path, name])
        else:
            out.append((path, command))

    for name in COMMANDS:
        walk(cli.get_command(ctx, name), [name])
    return out


def _single_valued_options():
    import click

    cases = []
    for path, command in _leaf_commands():
        for param in command.params:
            if isinstance(param, click.Option) and not (param.is_flag or param.count or param.multiple):
                cases.append((path, max(param.opts, key=len), param.nargs))
    return cases


def test_every_command_has_single_valued_options_to_check():
    cases = _single_valued_options()
    assert len({tuple(p) for p, _, _ in cases}) >= 15 and len(cases) >= 100


def test_an_option_that_takes_one_value_given_twice_is_refused_for_every_command(capsys):
    failures = []
    for path, flag, nargs in _single_valued_options():
        argv = [*path, flag, *["1"] * nargs, flag, *["2"] * nargs]
        code, out, err = run(argv, capsys)
        first, second = " ".join(["1"] * nargs), " ".join(["2"] * nargs)
        expected = (f"metaeval: error: {flag} takes one value; got it 2 times ({first!r}, {second!r}): give it once"
                    " (run the command once per value to compare several)\n")
        if code != 2 or err != expected:
            failures.append((argv, code, err))
    assert not failures, failures[:5]


def test_compare_with_two_levels_is_refused_not_silently_the_last(capsys):
    code, _, err = run(["compare", "--dataset", "summeval", "--level", "system", "--level=summary"], capsys)
    assert code == 2
    assert err.startswith("metaeval: error: --level takes one value; got it 2 times ('system', 'summary')")
