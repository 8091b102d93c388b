"""Real judge files (issue 39.3): verdict labels beyond the standard set, inputs named by several columns,
several files, annotators by pattern, case-only name variants, FastChat's own judgment files."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import DataWarning, InputFileError, ParameterError


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _jsonl(tmp_path, rows, name):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _mt_bench(tmp_path, seed=0):
    """MT-Bench-style files: human votes (model_a / model_b / winner, two turns) and FastChat's GPT-4 pair
    judgments (model_1 / model_2 / g1_winner / g2_winner, judge ["gpt-4", "pair-v2"])."""
    rng = np.random.default_rng(seed)
    models = ["gpt-4", "claude-v1", "vicuna-13b", "llama-13b"]
    strength = {"gpt-4": 1.5, "claude-v1": 1.0, "vicuna-13b": 0.3, "llama-13b": -0.8}
    humans, gpt = [], []
    for q in range(81, 111):
        for turn in (1, 2):
            for a in range(4):
                for b in range(a + 1, 4):
                    m1, m2 = models[a], models[b]
                    p = 1 / (1 + np.exp(-(strength[m1] - strength[m2])))
                    for expert in range(2):
                        u = rng.random()
                        winner = "tie" if u < 0.15 else "model_a" if u < 0.15 + 0.85 * p else "model_b"
                        humans.append({"question_id": q, "model_a": m1, "model_b": m2, "winner": winner,
                                       "judge": f"expert_{expert}", "turn": turn})
                    g = ["model_1" if rng.random() < p else "model_2" for _ in range(2)]
                    g = [w if rng.random() > 0.05 else "error" for w in g]
                    gpt.append({"question_id": q, "model_1": m1, "model_2": m2, "g1_winner": g[0], "g2_winner": g[1],
                                "judge": ["gpt-4", "pair-v2"], "turn": turn})
    return _jsonl(tmp_path, humans, "human_judgments.jsonl"), _jsonl(tmp_path, gpt, "gpt4_pair_judgments.jsonl")


def test_fastchat_pair_judgments_read_as_two_comparisons_each(tmp_path):
    _, gpt = _mt_bench(tmp_path)
    with pytest.raises(InputFileError, match=r"got 'error' \(map other labels with `verdict_map=\{OLD: NEW\}`"):
        me.read_comparisons(gpt, columns={"input": ["question_id", "turn"]})
    with pytest.warns(DataWarning, match=r"comparisons with the verdict 'error' dropped \(`verdict_map`\)"):
        c = me.read_comparisons(gpt, columns={"input": ["question_id", "turn"]}, verdict_map={"error": "drop"})
    assert c.judges == ("gpt-4/pair-v2",) and c.inputs[:2] == ("81/1", "81/2")
    rows = [json.loads(line) for line in gpt.read_text().splitlines()]
    kept = sum((r["g1_winner"] != "error") + (r["g2_winner"] != "error") for r in rows)
    assert c.n_comparisons == kept
    # game 2 shows model_2 first: its 'model_2' winner is the first system shown
    first = rows[0]
    g2 = c.take(np.flatnonzero((c.first == c.systems.index(first["model_2"]))
                               & (c.second == c.systems.index(first["model_1"])) & (c.input == 0)))
    if first["g2_winner"] != "error":
        assert g2.verdict[0] == (0 if first["g2_winner"] == "model_2" else 1)


def test_several_input_columns_and_the_pooling_warning(tmp_path):
    humans, _ = _mt_bench(tmp_path)
    with pytest.warns(DataWarning, match=r"groups hold several verdicts and the file has no repeat column: they are"
                                         r" pooled as repeats of one query; if they are separate judgments \(turns of"
                                         r" a conversation\), name every column that identifies an input"
                                         r" \(`columns\['input'\]`, repeatable\) or the repeat column."):
        pooled = me.read_comparisons(humans)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        turns = me.read_comparisons(humans, columns={"input": ("question_id", "turn")})
    assert len(pooled.inputs) == 30 and len(turns.inputs) == 60


def test_several_files_agree_with_patterns_and_the_cli(tmp_path, capsys):
    humans, gpt = _mt_bench(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        c = me.read_comparisons([humans, gpt], columns={"input": ["question_id", "turn"]},
                                verdict_map={"error": "drop"})
    assert c.judges == ("expert_0", "expert_1", "gpt-4/pair-v2")
    assert c.source == f"{humans}+{gpt}"
    r = me.judge_agreement(c, humans="expert_*", n_resamples=20, n_permutations=20, rng=0)
    assert r.humans == ("expert_0", "expert_1") and r.table["judge"].tolist() == ["gpt-4/pair-v2"]
    code, out, err = run(["judge", "agree", "--comparisons", str(humans), "--comparisons", str(gpt),
                          "--input-column", "question_id", "--input-column", "turn", "--verdict-map", "error=drop",
                          "--human", "expert_*", "--n-resamples", "20", "--n-permutations", "20", "--seed", "0",
                          "--format", "json"], capsys)
    assert code == 0, err
    payload = json.loads(out)
    assert payload["judges"][0]["accuracy"] == pytest.approx(r.table.iloc[0]["accuracy"])
    assert "human_agreement" in payload


def test_verdict_map_in_a_csv_and_its_errors(tmp_path, capsys):
    path = tmp_path / "c.csv"
    path.write_text("input,first,second,verdict\nq1,A,B,first\nq1,B,A,tie (inconsistent)\nq2,A,B,second\n"
                    "q2,B,A,first\n", encoding="utf-8")
    c = me.read_comparisons(path, verdict_map={"tie (inconsistent)": "tie"})
    assert c.verdict.tolist() == [0, 2, 1, 0]
    with pytest.raises(ParameterError) as e:
        me.read_comparisons(path, verdict_map={"tie (inconsistent)": "maybe"})
    assert str(e.value) == ("`verdict_map` must map a label to one of 'first', 'second', 'tie' or 'drop'; got"
                            " 'tie (inconsistent)'='maybe'.")
    code, out, err = run(["judge", "rank", "--comparisons", str(path), "--verdict-map", "nothing", "--n-resamples",
                          "0"], capsys)
    assert code == 2 and err.strip().endswith("`--verdict-map` must be OLD=NEW; got 'nothing'.")
    code, out, err = run(["judge", "rank", "--comparisons", str(path), "--verdict-map", "tie (inconsistent)=tie",
                          "--n-resamples", "0"], capsys)
    assert code == 0, err


def test_names_differing_only_in_case_are_warned_about(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("input,first,second,verdict\nq1,GPT-4,llama,first\nq2,gpt-4,llama,second\nq3,llama,GPT-4,tie\n",
                    encoding="utf-8")
    with pytest.warns(DataWarning, match=r"1 system names differ only in case and are kept apart: 'GPT-4' and"
                                         r" 'gpt-4'."):
        c = me.read_comparisons(path)
    assert c.systems == ("GPT-4", "gpt-4", "llama")


def test_long_lists_of_annotators_are_shortened_in_signatures():
    from metaeval.judges.agreement import _listed

    names = [f"rater{k}" for k in range(20)]
    short = _listed(names)
    assert short[:3] == names[:3] and short[3].startswith("...17 more (sha256:") and len(short) == 4
    assert _listed(names[:5]) == names[:5]


def test_a_column_naming_the_system_shown_first_puts_the_presented_order_in_place(tmp_path, capsys):
    """Issue 39.4c: position measures need the order shown; a file may store the systems in another order."""
    stored = tmp_path / "stored.csv"
    stored.write_text("input,model_a,model_b,winner,shown_first,length_a,length_b\n"
                      "q1,A,B,model_a,B,10,20\nq1,A,B,model_b,A,10,20\nq2,A,C,tie,C,5,7\n", encoding="utf-8")
    shown = tmp_path / "shown.csv"
    shown.write_text("input,first,second,verdict,first_length,second_length\n"
                     "q1,B,A,second,20,10\nq1,A,B,second,10,20\nq2,C,A,tie,7,5\n", encoding="utf-8")
    a = me.read_comparisons(stored, judge="j")
    b = me.read_comparisons(shown, judge="j")
    for name in ("first", "second", "verdict", "first_length", "second_length"):
        assert [a.systems[k] for k in getattr(a, name)] == [b.systems[k] for k in getattr(b, name)] \
            if name in ("first", "second") else np.array_equal(getattr(a, name), getattr(b, name))
    bad = tmp_path / "bad.csv"
    bad.write_text("input,model_a,model_b,winner,shown_first\nq1,A,B,model_a,C\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"row 2, column 'shown_first': the system shown first must be one of the"
                                             r" two compared \('A', 'B'\); got 'C'."):
        me.read_comparisons(bad)
    code, out, err = run(["judge", "audit", "--comparisons", str(stored), "--shown-first-column", "shown_first",
                          "--n-resamples", "0", "--format", "json"], capsys)
    assert code == 0, err
