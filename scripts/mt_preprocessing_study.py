"""How much each MT preprocessing choice (Leusch et al. 2005) moves a metric's correlation with humans.

Scores BLEU, NIST, WER and PER on SummEval's texts (16 systems x 100 inputs, all 11 references) under
each option of :mod:`metaeval.metrics.mt_preprocessing` and each reference-length strategy, and
correlates them with the mean expert relevance: system level on corpus scores (the items' statistics
summed per system, ``corpus_statistics=``), summary level on each summary's score. Prints one Markdown
table per metric (the tables of docs/mt-preprocessing.md); with ``--significance K``, a last column
with the two-sided paired bootstrap p-value (BOOT-BOTH, K resamples, seed 0) of the system-level Kendall
difference between the setting and the metric's default. TER is left out: sacrebleu's TER with block
shifts takes about 0.4 s per SummEval pair (17,600 pairs per setting).

Usage::

    python scripts/mt_preprocessing_study.py [--data ../shared/data] [--inputs 100] [--metrics bleu,nist,wer,per]
        [--significance 1000]
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

import metaeval as me
from metaeval.metrics import get_scorer
from metaeval.stats.corpus import CorpusScores

ROOT = Path(__file__).resolve().parent.parent
HUMAN = "expert.relevance"
MTEVAL = {"preset": "mteval"}
#: (label, options) per row; rows whose options a metric does not take are skipped for it.
SETTINGS = [
    ("metric default", {}),
    ("whitespace (text as given)", {"preprocessing": "none"}),
    ("mteval tokenization", {"preprocessing": "mteval"}),
    ("mteval + lowercase", {"preprocessing": {**MTEVAL, "lowercase": True}}),
    ("mteval + punctuation removed", {"preprocessing": {**MTEVAL, "remove_punctuation": True}}),
    ("punctuation split and removed", {"preprocessing": {"tokenize": "punctuation", "remove_punctuation": True}}),
    ("mteval + contractions, abbreviations", {"preprocessing": {**MTEVAL, "contractions": True,
                                                                "abbreviations": True}}),
    ("mteval + boundary <s>", {"preprocessing": {**MTEVAL, "boundaries": "start"}}),
    ("mteval + boundary </s>", {"preprocessing": {**MTEVAL, "boundaries": "end"}}),
    ("mteval + both boundaries", {"preprocessing": {**MTEVAL, "boundaries": "both"}}),
    ("preset leusch-baseline", {"preprocessing": "leusch-baseline"}),
    ("preset leusch-best", {"preprocessing": "leusch-best"}),
    *[(f"ref_length={s}", {"ref_length": s}) for s in me.metrics.mt_preprocessing.REFERENCE_LENGTHS],
]
BOUNDARY_FREE = ("wer", "per")  # boundary words provably leave edit rates unchanged: rows skipped


def score_matrix(name, options, candidates, references, systems, inputs):
    """Statistics ``(N, M, S)`` and cell scores ``(N, M)`` of one metric setting."""
    scorer = get_scorer(name, **options)
    streams = [[references[i][r] for i in inputs] for r in range(len(references[inputs[0]]))]
    stats = np.stack([scorer.item_statistics([candidates[s][i] for i in inputs], streams) for s in systems])
    return scorer, stats, scorer.aggregate(stats)


def study(data: Path, n_inputs: int, metrics: list[str], significance: int = 0, out=sys.stdout) -> None:
    candidates, references = me.load_texts("summeval", directory=data, all_references=True)
    human = me.load_dataset("summeval")
    systems, inputs = list(human.systems), list(human.inputs)[:n_inputs]
    z = human.subset(inputs=inputs).matrix(HUMAN)
    for name in metrics:
        print(f"\n{name.upper()} ({len(systems)} systems x {len(inputs)} inputs, 11 references)\n", file=out)
        extra = (" p (system tau vs default) |", "---:|") if significance else ("", "")
        print("| setting | system tau | system r | summary tau | summary r |" + extra[0], file=out)
        print("|---|---:|---:|---:|---:|" + extra[1], file=out)
        default = get_scorer(name)
        base = None
        for label, options in SETTINGS:
            if "ref_length" in options:
                if options["ref_length"] == default.ref_length:
                    continue
            if name in BOUNDARY_FREE and "boundaries" in str(options) and "both" not in label.lower():
                continue
            try:
                scorer, stats, cells = score_matrix(name, options, candidates, references, systems, inputs)
            except me.ParameterError:  # a strategy the metric does not take (e.g. BLEU and 'best')
                continue
            ds = me.ScoreSet({name: cells, HUMAN: z},
                             systems=systems, inputs=inputs, humans=[HUMAN])
            corpus = {name: CorpusScores(stats, scorer.aggregate, name=name)}
            row = [me.correlate(ds, name, HUMAN, level="system", coefficient=c, corpus_statistics=corpus).statistic
                   for c in ("kendall", "pearson")]
            row += [me.correlate(ds, name, HUMAN, level="summary", coefficient=c).statistic
                    for c in ("kendall", "pearson")]
            if significance:
                if base is None:
                    base = (cells, corpus[name])
                    row.append(math.nan)
                else:
                    both = me.ScoreSet({name: cells, "default": base[0], HUMAN: z}, systems=systems, inputs=inputs,
                                       humans=[HUMAN])
                    test = me.bootstrap_test(both, name, "default", HUMAN, level="system", coefficient="kendall",
                                             alternative="two-sided", n_resamples=significance, rng=0,
                                             corpus_statistics={**corpus, "default": base[1]})
                    row.append(test.pvalue)
            cells_text = ["-" if math.isnan(v) else f"{v:.3f}" for v in row]
            print(f"| {label} | " + " | ".join(cells_text) + " |", file=out, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--inputs", type=int, default=100)
    parser.add_argument("--metrics", default="bleu,nist,wer,per")
    parser.add_argument("--significance", type=int, default=0, metavar="K")
    args = parser.parse_args(argv)
    study(args.data, args.inputs, args.metrics.split(","), args.significance)
    return 0


if __name__ == "__main__":
    sys.exit(main())
