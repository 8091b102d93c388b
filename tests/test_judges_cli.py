"""`metaeval judge rank|agree|audit|alt-test`: outputs, formats and one-line errors."""
from __future__ import annotations

import json

import pytest

from metaeval.cli.main import main

EXPERTS = ["--scorer", "expert.relevance", "--annotators"]
HUMANS = ["--human", "expert.relevance/1", "--human", "expert.relevance/2", "--human", "expert.relevance/3"]


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _file(tmp_path, text, name="c.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = ("input,first,second,judge,verdict\nq1,A,B,j,first\nq1,B,C,j,second\nq2,A,C,j,tie\nq2,C,A,j,first\n"
        "q3,B,A,j,first\nq3,C,B,j,second\nq4,A,B,j,second\nq4,C,A,j,tie\n")


def test_rank_json_lists_the_systems_best_first(capsys):
    code, out, err = run(["judge", "rank", "--dataset", "summeval", "--scorer", "expert.relevance",
                          "--n-resamples", "50", "--format", "json"], capsys)
    assert code == 0, err
    payload = json.loads(out)
    systems = [row["system"] for row in payload["systems"]]
    scores = [row["score"] for row in payload["systems"]]
    assert len(systems) == 16 and scores == sorted(scores, reverse=True)
    assert payload["signature"].startswith("analysis:judge-rank|source:scores:expert.relevance")


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown", "latex"])
def test_rank_formats_on_a_comparison_file(tmp_path, capsys, fmt):
    code, out, err = run(["judge", "rank", "--comparisons", str(_file(tmp_path, GOOD)), "--n-resamples", "20",
                          "--resampling", "comparisons", "--format", fmt], capsys)
    assert code == 0, err
    assert "A" in out and "C" in out


def test_rank_html_page(tmp_path, capsys):
    page = tmp_path / "judges.html"
    code, out, err = run(["judge", "rank", "--dataset", "summeval", "--scorer", "rouge-2.recall", "--n-resamples",
                          "20", "--html", str(page)], capsys)
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert "Judges and pairwise preferences" in html and "<svg" in html and "Judge audit" in html
    assert f"wrote {page}" in err


def test_agree_audit_and_alt_test(capsys):
    code, out, err = run(["judge", "agree", "--dataset", "summeval", *EXPERTS, "--scorer", "rouge-2.recall",
                          *HUMANS, "--n-resamples", "20", "--n-permutations", "50", "--format", "csv"], capsys)
    assert code == 0, err
    assert out.splitlines()[0].startswith("judge,keys,accuracy,accuracy_low,accuracy_high")
    code, out, err = run(["judge", "audit", "--dataset", "summeval", "--scorer", "rouge-2.recall",
                          "--n-resamples", "0"], capsys)
    assert code == 0, err
    assert "every judge: length bias cannot be measured" not in out  # one judge: named
    assert "rouge-2.recall: length bias cannot be measured: the comparisons have no length columns." in out
    code, out, err = run(["judge", "alt-test", "--dataset", "summeval", *EXPERTS, "--scorer", "rouge-2.recall",
                          "--judge", "rouge-2.recall", "--human", "expert.relevance/*", "--epsilon", "0.1",
                          "--format", "json"], capsys)
    assert code == 0, err
    payload = json.loads(out)
    assert payload["can_replace"] is False and len(payload["annotators"]) == 3


@pytest.mark.parametrize("text, args, message", [
    ("input,first,second,verdict\nq1,A,B,maybe\n", [],
     "c.csv, row 2, column 'verdict': a verdict must be one of 'first', 'second', 'tie' (or model_a, model_b, a, b,"
     " draw, tie (bothbad)); got 'maybe' (map other labels with `--verdict-map` OLD=NEW, NEW one of first, second,"
     " tie or drop)."),
    ("input,first,second,verdict\nq1,A,B,first\nq1,A,C,first\nq2,B,C,first\nq2,C,B,first\n", [],
     "the maximum-likelihood Bradley-Terry scores diverge (no finite maximum): 'A' never loses; rank with a Gaussian"
     " prior (regularization > 0, --regularization) to get finite scores."),
    ("qid,first,second,verdict\nq1,A,B,first\n", ["--input-column", "question"],
     "c.csv, row 1: `--input-column` must name a column of the file ('qid', 'first', 'second', 'verdict'); got"
     " 'question'."),
    ("input,first,second,verdict\nq1,A,B,first\nq2,B,A,tie\n", ["--resampling", "judges"],
     "`resampling` 'judges' needs comparisons of at least 2 judges; got 1 ('c')."),
])
def test_rank_errors_are_one_line(tmp_path, capsys, text, args, message):
    path = _file(tmp_path, text)
    code, out, err = run(["judge", "rank", "--comparisons", str(path), "--n-resamples", "10", *args], capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"metaeval: error: {message.replace('c.csv', str(path), 1)}"
                                        if message.startswith("c.csv") else
                                        f"metaeval: error: {path}: {message}"
                                        if not message.startswith("`") else f"metaeval: error: {message}"]


def test_source_errors(tmp_path, capsys):
    code, _, err = run(["judge", "rank"], capsys)
    assert code == 2 and err.strip() == "metaeval: error: `--comparisons`, `--dataset` or `--scores` must be given; got none."
    code, _, err = run(["judge", "rank", "--dataset", "summeval"], capsys)
    assert err.strip() == "metaeval: error: `--scorer` must name the scorers that judge (repeatable); got none."
    code, _, err = run(["judge", "alt-test", "--dataset", "summeval", "--scorer", "expert.relevance", "--scorer",
                        "rouge-2.recall", "--judge", "rouge-2.recall", "--human", "expert.relevance"], capsys)
    assert code == 2 and err.strip() == ("metaeval: error: `humans` must name at least 2 annotators (the test leaves one"
                                         " out and compares with the rest); got 1.")


def test_html_never_overwrites_the_comparisons(tmp_path, capsys):
    path = _file(tmp_path, GOOD)
    code, out, err = run(["judge", "rank", "--comparisons", str(path), "--html", str(path)], capsys)
    assert code == 2 and path.read_text(encoding="utf-8") == GOOD
    assert err.strip() == (f"metaeval: error: --html {str(path)!r} is the same file as --comparisons {str(path)!r};"
                           " writing it would destroy the input: choose another output path")


def test_agree_html_page_has_the_three_tables(tmp_path, capsys):
    page = tmp_path / "agree.html"
    code, out, err = run(["judge", "agree", "--dataset", "summeval", *EXPERTS, "--scorer", "rouge-2.recall",
                          *HUMANS, "--n-resamples", "10", "--n-permutations", "20", "--html", str(page)], capsys)
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert "Judges against the humans" in html and "Judge audit" in html and "<svg" in html


def test_alt_test_min_instances_default_is_the_librarys():
    from metaeval.cli.judge_command import alt_test as command
    from metaeval.judges.alt_test import MIN_INSTANCES

    default = next(p.default for p in command.params if p.name == "min_instances")
    assert default == MIN_INSTANCES == 30


def test_pages_name_exactly_the_files_beside_them(tmp_path, capsys):
    """Issue 38.5: every page's footer promised results.json, correlations.csv and comparison.csv beside it."""
    page = tmp_path / "judges.html"
    code, out, err = run(["judge", "rank", "--comparisons", str(_file(tmp_path, GOOD)), "--n-resamples", "10",
                          "--resampling", "comparisons", "--html", str(page)], capsys)
    assert code == 0, err
    assert "beside this file" not in page.read_text(encoding="utf-8")


def test_report_includes_the_judges_section_when_given_comparisons(tmp_path, capsys):
    import numpy as np

    rng = np.random.default_rng(0)
    lines = ["system,input,human,m1,m2"]
    for s in ("A", "B", "C", "D"):
        for q in range(6):
            h = rng.normal()
            lines.append(f"{s},q{q},{h:.3f},{h + rng.normal():.3f},{rng.normal():.3f}")
    scores = _file(tmp_path, "\n".join(lines) + "\n", "scores.csv")
    rows = ["input,first,second,judge,verdict"]
    for q in range(6):
        for a, b in (("A", "B"), ("B", "C"), ("C", "D"), ("A", "D"), ("A", "C"), ("B", "D")):
            for judge in ("h1", "h2", "llm"):
                rows.append(f"q{q},{a},{b},{judge},{('first', 'second', 'tie')[int(rng.integers(0, 3))]}")
    comparisons = _file(tmp_path, "\n".join(rows) + "\n", "prefs.csv")
    out_dir = tmp_path / "report"
    code, out, err = run(["report", "--scores", str(scores), "--human", "human", "--quick", "--analysis", "none",
                          "--comparisons", str(comparisons), "--judge-human", "h*", "--seed", "0", "--output",
                          str(out_dir), "--no-progress"], capsys)
    assert code == 0, err
    html = (out_dir / "report.html").read_text(encoding="utf-8")
    assert 'data-section="judges"' in html and "Judges against the humans (h1, h2)" in html
    assert "an even split of their votes counting half for each side (MT-Bench" in html
    written = sorted(p.name for p in out_dir.iterdir() if p.name != "report.html")
    footer = html[html.index('<footer class="page">'):]
    for name in ("results.json", "correlations.csv", "comparison.csv"):
        assert (name in footer) == (name in written)
    payload = json.loads((out_dir / "results.json").read_text(encoding="utf-8"))
    assert payload["judges"]["ranking"]["signature"].startswith("analysis:judge-rank|source:")
    assert "judges:h1,h2|" in payload["judges"]["ranking"]["signature"]
    assert payload["judges"]["agreement"]["judges"][0]["judge"] == "llm"


def test_alt_test_numeric_alignment_from_the_cli(tmp_path, capsys):
    code, out, err = run(["judge", "alt-test", "--dataset", "summeval", *EXPERTS, "--scorer", "rouge-2.recall",
                          "--judge", "rouge-2.recall", "--human", "expert.relevance/*", "--alignment", "neg-rmse",
                          "--format", "json"], capsys)
    assert code == 0, err
    payload = json.loads(out)
    assert payload["signature"].count("alignment:neg-rmse") == 1 and payload["annotators"][0]["instances"] == 1600
    path = _file(tmp_path, GOOD + "q1,A,B,h,first\nq1,A,B,k,second\n")
    code, out, err = run(["judge", "alt-test", "--comparisons", str(path), "--judge", "j", "--human", "h",
                          "--human", "k", "--alignment", "neg-rmse"], capsys)
    assert code == 2 and err.strip() == ("metaeval: error: `alignment` 'neg-rmse' needs numeric ratings"
                                         " (comparisons made from scores: comparisons_from_scores, --scorer); got"
                                         " comparisons read as verdicts.")


def test_audit_judge_family_from_the_cli(tmp_path, capsys):
    rows = ["input,first,second,judge,verdict"]
    for q in range(30):
        rows += [f"q{q},A,gpt-4o,gpt-4,second", f"q{q},B,gpt-4o,gpt-4,second", f"q{q},A,B,gpt-4,first",
                 f"q{q},A,gpt-4o,h,{('first', 'second')[q % 2]}", f"q{q},B,gpt-4o,h,{('first', 'second')[q % 3 > 0]}"]
    path = _file(tmp_path, "\n".join(rows) + "\n")
    code, out, err = run(["judge", "audit", "--comparisons", str(path), "--judge", "gpt-4", "--judge-family",
                          "gpt-4=gpt-4o", "--n-resamples", "50", "--seed", "0", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["judges"][0]["self_preference"] > 0.3
    code, out, err = run(["judge", "audit", "--comparisons", str(path), "--judge-family", "gpt-4"], capsys)
    assert code == 2 and err.strip().endswith("`--judge-family` must be JUDGE=SYSTEM; got 'gpt-4'.")


@pytest.mark.parametrize("command", [["rank", "--n-resamples", "30"], ["audit", "--n-resamples", "30"],
                                     ["agree", "--human", "h*", "--n-resamples", "30", "--n-permutations", "30"],
                                     ["alt-test", "--judge", "j", "--human", "h*", "--min-instances", "1"]])
def test_every_judge_command_draws_progress(tmp_path, capsys, command):
    text = GOOD + "".join(f"q{k},A,B,h{m},{('first', 'second', 'tie')[(k + m) % 3]}\n" for k in range(1, 5)
                          for m in range(2))
    code, out, err = run(["judge", command[0], "--comparisons", str(_file(tmp_path, text)), *command[1:],
                          "--progress"], capsys)
    assert code == 0, err
