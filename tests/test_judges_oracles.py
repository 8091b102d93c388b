"""Judges against the reference implementations, run outside the project (issue 39): FastChat's MT-Bench
agreement script and the Alternative Annotator Test authors' code. Their numbers are pinned as constants, with
where they came from; the data are rebuilt here from a seed."""
from __future__ import annotations

import json
import math
import random

import pytest

import metaeval as me
from metaeval.cli.main import main


def mt_bench_release(seed: int = 2023):
    """MT-Bench-like judgments in the release's own format (lmsys/mt_bench_human_judgments: `human` and
    `gpt4_pair`): 80 questions x 2 turns, 3-7 model pairs each in a random order, 1-5 distinct annotators a pair
    (`expert_N`, and `author_N` whom FastChat's script leaves out of the humans), winners model_a / model_b /
    tie; GPT-4's both-orders verdict on 90% of the pairs, a flip recorded as `tie (inconsistent)`."""
    rnd = random.Random(seed)
    models = {"gpt-4": 1.6, "claude-v1": 1.1, "gpt-3.5-turbo": 0.9, "vicuna-13b-v1.2": 0.2, "alpaca-13b": -0.9,
              "llama-13b": -1.3}
    names = list(models)
    human, gpt = [], []
    for q in range(81, 161):
        for turn in (1, 2):
            pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
            rnd.shuffle(pairs)
            for a, b in pairs[: rnd.randint(3, 7)]:
                if rnd.random() < 0.5:
                    a, b = b, a
                p = 1 / (1 + math.exp(models[b] - models[a]))
                n_votes = rnd.choice([1, 1, 2, 2, 3, 3, 4, 5])
                voters = [f"author_{i}" if i >= 61 else f"expert_{i}" for i in rnd.sample(range(67), n_votes)]
                for judge in voters:
                    u = rnd.random()
                    w = "tie" if u < 0.22 else "model_a" if rnd.random() < p else "model_b"
                    human.append({"question_id": q, "model_a": a, "model_b": b, "winner": w, "judge": judge,
                                  "turn": turn})
                if rnd.random() < 0.9:
                    g1 = "model_a" if rnd.random() < min(1, p + 0.1) else "model_b"
                    g2 = "model_a" if rnd.random() < max(0, p - 0.1) else "model_b"
                    if rnd.random() < 0.08:
                        g1 = g2 = "tie"
                    w = g1 if g1 == g2 else "tie (inconsistent)"
                    gpt.append({"question_id": q, "model_a": a, "model_b": b, "winner": w,
                                "judge": ["gpt-4", "pair-v2"], "turn": turn})
    return human, gpt


# FastChat's compute_agreement.py (lm-sys/FastChat, commit 0e6d3e4beaab66f4d3f93db72541a4abab8af28d,
# fastchat/llm_judge/compute_agreement.py), run unchanged outside the project with the shared venv's Python on
# the two JSON arrays `mt_bench_release(2023)` writes (1991 human votes, 691 GPT-4 verdicts):
#   python compute_agreement.py --judges gpt4-pair human --votefiles human_judgments.json gpt4_pair_judgments.json
#   python compute_agreement.py --judges human human --votefiles human_judgments.json
# printed "turn T with tie. #total: N, #agree: A" (S1) and "turn T without tie." (S2): (total, agree) below.
# Its "human" is every judge named expert_*; `tie (inconsistent)` is a tie (its `"tie" in vote`).
FASTCHAT_GPT4_VS_HUMAN = {(1, "S1"): (792, 358), (1, "S2"): (387, 295), (2, "S1"): (808, 355), (2, "S2"): (393, 294)}
FASTCHAT_HUMAN_VS_HUMAN = {(1, "S1"): (910, 407), (1, "S2"): (550, 366), (2, "S1"): (921, 442), (2, "S2"): (627, 414)}


@pytest.fixture(scope="module")
def mt_bench_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mtbench")
    human, gpt = mt_bench_release(2023)
    assert (len(human), len(gpt)) == (1991, 691)
    (folder / "human_judgments.json").write_text(json.dumps(human), encoding="utf-8")
    (folder / "gpt4_pair_judgments.json").write_text(json.dumps(gpt), encoding="utf-8")
    return folder / "human_judgments.json", folder / "gpt4_pair_judgments.json"


def _counts(row, name):
    """(pairs, agreeing pairs) of a vote-level statistic from a result row."""
    pairs = row[name.replace("vote_agreement", "vote_pairs")]
    return pairs, round(row[name] * pairs, 9)


@pytest.mark.parametrize("turn", [1, 2])
def test_vote_agreement_equals_fastchat_compute_agreement(mt_bench_files, turn):
    """The same files FastChat's script reads, one turn at a time (its unit), through the Python API."""
    c = me.read_comparisons(mt_bench_files, columns={"input": ("question_id", "turn")}, where={"turn": [str(turn)]},
                            verdict_map={"tie (inconsistent)": "tie"})
    r = me.judge_agreement(c, "gpt-4/pair-v2", humans="expert_*", n_resamples=0, n_permutations=10, rng=0)
    row, h = r.table.iloc[0].to_dict(), r.human_agreement
    assert _counts(row, "vote_agreement") == FASTCHAT_GPT4_VS_HUMAN[turn, "S1"]
    assert _counts(row, "vote_agreement_no_ties") == FASTCHAT_GPT4_VS_HUMAN[turn, "S2"]
    assert _counts(h, "vote_agreement") == FASTCHAT_HUMAN_VS_HUMAN[turn, "S1"]
    assert _counts(h, "vote_agreement_no_ties") == FASTCHAT_HUMAN_VS_HUMAN[turn, "S2"]


def test_vote_agreement_of_both_turns_from_the_cli(mt_bench_files, capsys):
    """Both turns in one call (an input is a question and a turn): FastChat's counts of the two turns summed."""
    code = main(["judge", "agree", "--comparisons", str(mt_bench_files[0]), "--comparisons", str(mt_bench_files[1]),
                 "--input-column", "question_id", "--input-column", "turn", "--verdict-map", "tie (inconsistent)=tie",
                 "--human", "expert_*", "--judge", "gpt-4/pair-v2", "--n-resamples", "0", "--seed", "0",
                 "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    row, h = result["judges"][0], result["human_agreement"]
    for name, setup in (("vote_agreement", "S1"), ("vote_agreement_no_ties", "S2")):
        fc = [FASTCHAT_GPT4_VS_HUMAN[t, setup] for t in (1, 2)]
        assert _counts(row, name) == (fc[0][0] + fc[1][0], fc[0][1] + fc[1][1])
        fc = [FASTCHAT_HUMAN_VS_HUMAN[t, setup] for t in (1, 2)]
        assert _counts(h, name) == (fc[0][0] + fc[1][0], fc[0][1] + fc[1][1])
    assert "warning" not in err  # distinct annotators per pair and the turn named: nothing pooled
