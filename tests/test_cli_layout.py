"""The terminal output fits the terminal: widths, column blocks, signatures, datasets, options, warnings."""
from __future__ import annotations

import click
import hypothesis
import pytest

from metaeval.cli.main import _show_warnings, cli, main
from metaeval.report.render import SignatureLines

WIDTH = 100


def run(argv, capsys, monkeypatch, width=WIDTH):
    monkeypatch.setenv("COLUMNS", str(width))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.mark.parametrize("argv, expected", [
    (["stability", "--dataset", "realsumm", "--n-repetitions", "5"], ["litepyramid.recall (human)", "m=50"]),
    (["delta", "--dataset", "realsumm", "--metric", "rouge-1.recall", "--metric", "bertscore.f1",
      "--n-resamples", "20"], ["rouge-1.recall: Kendall tau", "100%", "n=276"]),
    (["delta", "--dataset", "realsumm", "--n-resamples", "10", "--view", "curve"], ["npower", "u="]),
    (["compare", "--dataset", "realsumm", "--n-resamples", "100"], ["vs #26", "rank", "1-26"]),
    (["compare", "--dataset", "summeval", "--n-resamples", "100", "--metric", "rouge-1.f1", "--metric",
      "rouge-2.f1", "--metric", "bertscore.f1"], ["vs #3", "holm-corrected p-value"]),
    (["correlate", "--dataset", "summeval", "--n-resamples", "50", "--metric", "rouge-1.f1"], ["kendall-b"]),
    (["datasets", "show", "summeval"], ["metric scorers (34)", "rouge-1: recall, precision, f1"]),
    (["datasets"], ["wmt19-da-sys"]),
])
def test_tables_fit_100_columns(argv, expected, capsys, monkeypatch):
    code, out, err = run(argv, capsys, monkeypatch)
    assert code == 0, err
    assert _widest(out) <= WIDTH, [line for line in out.splitlines() if len(line) > WIDTH][:3]
    for text in expected:
        assert text in out


def test_compare_shows_delta_and_corrected_pvalue(capsys, monkeypatch):
    code, out, err = run(["compare", "--dataset", "summeval", "--metric", "rouge-2.recall", "--metric",
                          "bertscore.precision", "--n-resamples", "1000"], capsys, monkeypatch)
    assert code == 0, err
    import metaeval as me

    result = me.compare_metrics(me.load_dataset("summeval"), ["rouge-2.recall", "bertscore.precision"],
                                "expert.relevance", n_resamples=1000, rng=0)
    order = sorted(range(2), key=lambda i: (result.ranks[i], -result.correlations[i].statistic))
    first, second = order
    delta = f"{result.deltas[first, second]:+.2f}".replace("+0.", "+.").replace("-0.", "-.")
    p = result.adjusted_pvalues[first, second]
    shown = "<.001" if p < 0.001 else ("1" if p >= 0.9995 else f"{p:.3f}".lstrip("0"))
    assert delta in out and shown in out


def test_narrow_terminal_splits_into_blocks(capsys, monkeypatch):
    code, out, err = run(["stability", "--dataset", "realsumm", "--n-repetitions", "5"], capsys, monkeypatch,
                         width=60)
    assert code == 0, err
    assert _widest(out) <= 60
    assert out.count("┃ scorer") >= 3  # the 10 sample sizes in several blocks, each with the scorer column


def test_signature_lines_break_between_fields_only():
    signature = "dataset:x|systems:24|" + "|".join(f"field{i}:value{i}" for i in range(30)) + "|version:0.1.0"
    lines = SignatureLines(signature).lines(40)
    assert all(len(line) <= 40 for line in lines)
    joined = "".join(line[2:] if n else line[len("signature: "):] for n, line in enumerate(lines))
    assert joined == signature
    assert all(line.startswith("  |") for line in lines[1:])


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(values=hypothesis.strategies.lists(
    hypothesis.strategies.text(alphabet="ab ,;:=()x-", min_size=1, max_size=140), min_size=1, max_size=6),
    width=hypothesis.strategies.integers(min_value=20, max_value=120))
def test_a_wrapped_signature_joins_back_whole(values, width):
    """Never cropped, never a continuation line starting or ending with a space (how a reader tells one): a
    field longer than a line, with or without commas (`2 rater waves (seed 0, stream (0, 1))`, a subset naming
    files and filters), is folded, and joining the lines gives the signature back."""
    signature = "|".join(f"k{n}:{v.strip() or 'x'}" for n, v in enumerate(values))
    if "  " in signature:
        return  # a double space is never printed by the library (and could not be folded between non-spaces)
    lines = SignatureLines(signature).lines(width)
    joined = "".join(line[2:] if n else line[len("signature: "):] for n, line in enumerate(lines))
    assert joined == signature
    assert all(line.startswith("  ") and line[2:3] not in ("", " ") and not line.endswith(" ") for line in lines[1:])
    assert all(len(line) <= max(20, width) for line in lines[1:])


def test_bare_datasets_lists_them(capsys, monkeypatch):
    code, out, err = run(["datasets"], capsys, monkeypatch)
    assert code == 0 and "summeval" in out and "realsumm" in out


def test_datasets_show_every_format(capsys, monkeypatch):
    for fmt in ("table", "json", "csv", "latex", "markdown"):
        code, out, err = run(["datasets", "show", "realsumm", "--format", fmt], capsys, monkeypatch)
        assert code == 0, (fmt, err)
        assert "rouge-1" in out


def _commands(command=cli, path=()):
    context = click.Context(cli)
    if isinstance(command, click.Group):
        for name in command.list_commands(context):
            yield from _commands(command.get_command(context, name), path + (name,))
    else:
        yield " ".join(path), command


def test_every_option_has_help():
    missing = [(name, param.opts) for name, command in _commands() for param in command.params
               if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()]
    assert missing == []


LONG_COMMANDS = ("correlate", "compare", "stability", "delta", "report", "score", "simulate coverage", "mt evaluate",
                 "mt audit",
                 "simulate power")


def test_long_commands_take_no_progress():
    commands = dict(_commands())
    for name in LONG_COMMANDS:
        flags = {flag for param in commands[name].params for flag in (*param.opts, *param.secondary_opts)}
        assert "--no-progress" in flags, name


def test_repetitions_are_n_repetitions_everywhere():
    for name, command in _commands():
        visible = {flag for param in command.params if not getattr(param, "hidden", False) for flag in param.opts}
        assert "--repetitions" not in visible, name


def test_warnings_about_cells_say_which_and_fold(capsys):
    class W:
        def __init__(self, text):
            self.message = text

    _show_warnings([W("metric a, system level, pearson: one input."), W("metric b, summary level, kendall-b: one input."),
                    W("metric a, system level, pearson: one input."), W("something else.")])
    err = capsys.readouterr().err.splitlines()
    assert err == ["metaeval: warning: metric a, system level, pearson: one input. (and 1 more like this)",
                   "metaeval: warning: something else."]


def test_correlate_warning_names_the_cells_in_one_line(capsys, monkeypatch):
    import metaeval as me

    code, out, err = run(["correlate", "--dataset", "wmt19-da-sys", "--n-resamples", "20"], capsys, monkeypatch)
    assert code == 0, err
    lines = [line for line in err.splitlines() if "cannot resample the inputs" in line]
    ds = me.load_dataset("wmt19-da-sys")
    metrics = [m for m in ds.scorers if m not in ds.humans]
    assert lines == ["metaeval: warning: BOOT-BOTH cannot resample the inputs: the data has 1 input (only the systems "
                     "vary); the result shows no input-to-input variability. [30 table cells: system level; pearson, "
                     f"spearman, kendall-b; {len(metrics)} metrics: {', '.join(metrics)}]"]


def test_report_summary_and_score_fit_80_columns_without_trailing_blanks(tmp_path, capsys, monkeypatch):
    """Issue 21 item 9: the report's terminal summary and score's signature lines follow COLUMNS; no line
    (titles included) ends in blanks."""
    code, out, err = run(["report", "--dataset", "summeval", "--human", "expert.relevance", "--n-resamples", "100",
                          "--analysis", "none", "--output", str(tmp_path / "rep")], capsys, monkeypatch, width=80)
    assert code == 0, err
    table = [line for line in out.splitlines() if not line.startswith(("wrote ", "open "))]
    assert max(len(line) for line in table) <= 80
    assert all(line == line.rstrip() for line in out.splitlines())
    assert "summeval: 16 systems x 100 inputs, kendall-b with expert.relevance" in out.splitlines()
    cands, refs = tmp_path / "c.jsonl", tmp_path / "r.jsonl"
    cands.write_text('{"system": "a", "input": "1", "candidate": "the cat sat"}\n')
    refs.write_text('{"input": "1", "reference": "the cat sat"}\n')
    code, out, err = run(["score", "--candidates", str(cands), "--references", str(refs), "--metric", "bleu",
                          "--output", str(tmp_path / "o.csv"), "--no-progress"], capsys, monkeypatch, width=80)
    assert code == 0, err
    assert max(len(line) for line in out.splitlines() if not line.startswith("wrote ")) <= 80
    assert any(line.startswith("    |") for line in out.splitlines())  # the signature wraps at a field

