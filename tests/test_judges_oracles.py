"""Judges against the reference implementations, run outside the project (issue 39): FastChat's MT-Bench
agreement script and the Alternative Annotator Test authors' code. Their numbers are pinned as constants, with
where they came from; the data are rebuilt here from a seed."""
from __future__ import annotations

import json
import math
import random
import warnings

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


def pointwise_ratings(seed: int = 39):
    """Pointwise 1-10 ratings: the outputs of 4 systems on 60 prompts, each output rated by some of 9 annotators
    (each with its own coverage and noise; the last two rate few outputs, under 30 shared with another
    annotator), and two LLM judges rating every output (`llm` close to the truth, `llm-b` biased and noisy).
    Returns ``(rows, llm, llm_b)``: rows ``(system, prompt, annotator, rating)``, the judges as dicts."""
    rnd = random.Random(seed)
    systems = {"sys-a": 0.8, "sys-b": 0.3, "sys-c": -0.2, "sys-d": -0.9}
    cover = [0.6, 0.5, 0.5, 0.4, 0.4, 0.3, 0.3, 0.08, 0.05]
    noise = [1.0, 1.2, 0.8, 1.5, 1.0, 2.0, 1.1, 1.0, 1.3]
    clip = lambda v: min(10, max(1, round(v)))  # noqa: E731
    rows, llm, llm_b = [], {}, {}
    for system, effect in systems.items():
        for k in range(60):
            prompt = f"p{k:02d}"
            truth = rnd.gauss(6 + effect, 1.5)
            for a in range(9):
                if rnd.random() < cover[a]:
                    rows.append((system, prompt, f"ann{a + 1}", clip(truth + rnd.gauss(0, noise[a]))))
            llm[system, prompt] = clip(truth + rnd.gauss(0.3, 0.9))
            llm_b[system, prompt] = clip(truth + rnd.gauss(1.0, 2.0))
    return rows, llm, llm_b


# The Alternative Annotator Test authors' code (nitaytech/AltTest, commit 18428b1f4f34ac61c4978bc180263b90111e7337,
# alt_test_example.ipynb: the cells defining `alt_test`, `by_procedure`, `accuracy`, `neg_rmse` and `ttest`), run
# unchanged outside the project with the shared venv's scipy on `pointwise_ratings(39)`: humans
# {annotator: {f"{system}__{prompt}": rating}} (the nine annotators only), the judge {instance: rating};
#   alt_test(judge, humans, scoring, epsilon=EPS, min_instances_per_human=M)  ->  (winning rate, advantage prob.)
# and the p-values of the tested annotators in order, recorded by wrapping its `ttest`. It printed "Dropped 19
# instances with less than 2 annotators", and "Skipping annotator ann8 with only 15 instances < 30" (ann9: 10);
# with M = 100 also ann4 (88), ann5 (99), ann6 (87) and ann7 (78).
ALT_TEST_AUTHORS = {
    ("llm", "neg-rmse", 0.15, 30): (1.0, 0.7673475236842904, [
        5.628789448688745e-05, 2.2224805978106894e-06, 0.009806646084346346, 0.0007475238025974287,
        1.0201507519318019e-05, 4.3266395496624056e-11, 0.00029356789969131104]),
    ("llm", "accuracy", 0.2, 30): (1.0, 0.8245696765625113, [
        6.7440808062824855e-09, 3.3337680291479305e-08, 4.920856978969945e-05, 9.730093707535644e-09,
        4.9353864081756366e-06, 3.8471570217500995e-11, 0.001223887659571369]),
    ("llm", "neg-rmse", 0.15, 100): (1.0, 0.7450274753305056, [
        5.628789448688745e-05, 2.2224805978106894e-06, 0.009806646084346346]),
    ("llm-b", "neg-rmse", 0.15, 30): (0.0, 0.519682312595434, [
        0.9936867929764476, 0.9956032792158817, 0.99810594467028, 0.33968744531061806, 0.8870198947757986,
        0.017839964814908647, 0.620081220712577]),
    ("llm-b", "accuracy", 0.2, 30): (0.14285714285714285, 0.7129389307512908, [
        0.008147876511163638, 0.398998142783893, 0.07894564291126806, 0.03806686214049294, 0.08761706521668125,
        0.0003034648579549834, 0.02693279509977304]),
    ("llm-b", "neg-rmse", 0.15, 100): (0.0, 0.4604675907706211, [
        0.9936867929764476, 0.9956032792158817, 0.99810594467028]),
}
ALT_TEST_SKIPPED = {30: ["rating/8", "rating/9"], 100: [f"rating/{k}" for k in range(4, 10)]}


def _pointwise_scoreset():
    import numpy as np

    rows, llm, llm_b = pointwise_ratings(39)
    systems = sorted({s for s, _, _, _ in rows} | {s for s, _ in llm})
    prompts = sorted({p for _, p in llm})
    grid = np.full((len(systems), len(prompts), 9), np.nan)
    for s, p, a, v in rows:
        grid[systems.index(s), prompts.index(p), int(a[3:]) - 1] = v
    judges = {name: np.array([[d[s, p] for p in prompts] for s in systems], dtype=float)
              for name, d in (("llm", llm), ("llm-b", llm_b))}
    return me.ScoreSet.from_matrices({"rating": grid, **judges}, systems=systems, inputs=prompts)


@pytest.mark.parametrize("case", sorted(ALT_TEST_AUTHORS))
def test_alt_test_on_pointwise_ratings_equals_the_authors_code(case):
    """Numeric ratings read as they are (a ScoreSet: an instance is one output), the humans only those named
    (the other judge is in the data and is no human), annotators under `min_instances` skipped."""
    judge, alignment, epsilon, min_instances = case
    winning_rate, advantage, pvalues = ALT_TEST_AUTHORS[case]
    r = me.alt_test(_pointwise_scoreset(), judge, humans="rating/*", epsilon=epsilon, alignment=alignment,
                    min_instances=min_instances)
    tested = r.table[r.table["tested"]]
    assert list(r.skipped) == ALT_TEST_SKIPPED[min_instances]
    assert tested["pvalue"].tolist() == pytest.approx(pvalues, rel=1e-12, abs=1e-16)
    assert r.winning_rate == pytest.approx(winning_rate, abs=1e-15)
    assert r.advantage_probability == pytest.approx(advantage, abs=1e-14)
    assert r.signature.as_dict()["alignment"] == alignment


def test_alt_test_on_a_pointwise_rating_file_from_the_cli(tmp_path, capsys):
    """A rating file (system, prompt, annotator, rating, and the judges' ratings of each output) with
    `--alignment neg-rmse`: the ratings are tested as they are, the same numbers as the authors' code; one
    system is enough (no pairs are formed)."""
    import csv

    rows, llm, llm_b = pointwise_ratings(39)
    for name, keep in (("ratings.csv", lambda s: True), ("one_system.csv", lambda s: s == "sys-a")):
        with open(tmp_path / name, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["system", "input", "annotator", "rating", "llm", "llm-b"])
            writer.writerows([s, p, a, v, llm[s, p], llm_b[s, p]] for s, p, a, v in rows if keep(s))
    args = ["judge", "alt-test", "--scorer", "rating", "--scorer", "llm", "--scorer", "llm-b", "--annotators",
            "--judge", "llm", "--human", "rating/*", "--alignment", "neg-rmse", "--epsilon", "0.15", "--format", "json"]
    assert main([*args, "--scores", str(tmp_path / "ratings.csv")]) == 0
    result = json.loads(capsys.readouterr().out)
    winning_rate, advantage, pvalues = ALT_TEST_AUTHORS["llm", "neg-rmse", 0.15, 30]
    assert [a["pvalue"] for a in result["annotators"] if a["tested"]] == pytest.approx(pvalues, rel=1e-12, abs=1e-16)
    assert result["winning_rate"] == winning_rate and result["advantage_probability"] == pytest.approx(advantage)
    assert result["skipped"] == ["rating/8", "rating/9"]
    assert "source:scores:rating,llm|" in result["signature"]
    assert main([*args, "--scores", str(tmp_path / "one_system.csv"), "--min-instances", "5"]) == 0
    one = json.loads(capsys.readouterr().out)
    api = me.alt_test(_pointwise_scoreset().subset(systems=["sys-a"]), "llm", humans="rating/*", epsilon=0.15,
                      alignment="neg-rmse", min_instances=5)
    tested = api.table[api.table["tested"]]
    assert [a["pvalue"] for a in one["annotators"] if a["tested"]] == pytest.approx(tested["pvalue"].tolist())
    assert len(tested) >= 5 and "source:scores:rating,llm|" in one["signature"]
    wild = [("llm*" if a == "llm" and args[k - 1] == "--judge" else a) for k, a in enumerate(args)]
    assert main([*wild, "--scores", str(tmp_path / "ratings.csv")]) == 2
    assert capsys.readouterr().err == "metaeval: error: `judge` must name one rater; got 'llm*', which names 2.\n"


def test_alt_test_on_ratings_errors():
    from metaeval.errors import ParameterError

    ds = _pointwise_scoreset()
    with pytest.raises(ParameterError, match=r"^`humans` must name raters of the scores \('rating/1', 'rating/2',"
                                             r" .*, 'llm', \.\.\.\); got 'expert_\*'.$"):
        me.alt_test(ds, "llm", humans="expert_*", alignment="neg-rmse")
    with pytest.raises(ParameterError, match=r"^`judge` must name one rater; got 'llm\*', which names 2.$"):
        me.alt_test(ds, "llm*", humans="rating/*", alignment="neg-rmse")
    with pytest.raises(ParameterError, match=r"^`comparisons` must be a Comparisons or a ScoreSet; got dict.$"):
        me.alt_test({}, "llm", humans="rating/*")


def test_alt_test_constant_differences_as_the_authors_scipy_gives_them():
    """Every d_i equal: the authors' `ttest_1samp(d, epsilon, alternative='less')` gives p 0 below epsilon, 1
    above and NaN at epsilon (never rejected); metaeval gives 0, 1 and 1, the same rejections."""
    import numpy as np
    from scipy.stats import ttest_1samp

    from metaeval.judges.alt_test import alt_test_arrays

    for values, epsilon in (((0, 0, 0, 0), 0.2), ((1, 1, 1, 1), 0.2), ((0, 0, 0, 0), 0.0), ((-1, -1, -1), 0.1)):
        # judge and annotator 1 agree with annotator 2 (d = 0), disagree (d = 1 or -1): build d through ratings
        d = np.array(values, dtype=float)
        judge = np.where(d > 0, 5.0, 1.0)  # d = 1: the annotator is closer; d = -1: the judge is
        h1 = np.where(d < 0, 5.0, 1.0)
        others = np.full(d.size, 1.0)
        pvalue = alt_test_arrays(judge, np.vstack([h1, others]), epsilon=epsilon, alpha=0.05, min_instances=1,
                                 alignment="neg-rmse")[4][0]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy warns on a constant sample
            reference = ttest_1samp(d, epsilon, alternative="less").pvalue
        assert (pvalue < 0.05) == (reference < 0.05)
        assert pvalue == reference or (np.isnan(reference) and pvalue == 1.0)
