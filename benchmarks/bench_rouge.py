"""Benchmark: metaeval's ROUGE-1.5.5 re-implementation against the `rouge-score` package.

Both score the 2,500 REALSumm (summary, reference) pairs in the same run, ROUGE-1, ROUGE-2 and the
summary-level ROUGE-L with stemming:

* metaeval: ``Rouge(n=2, stem=True)`` (ROUGE-1.5.5 ``-n 2 -m``), sentences from the ``<t> ... </t>``
  markers;
* rouge-score: ``RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)``, the same sentences
  joined by newlines (``rougeLsum`` is its summary-level LCS).

Each scorer is built fresh for every repetition (cold caches) and the best of ``--repeats`` runs is
reported, in pairs per second, with the ratio.

Run: ``python benchmarks/bench_rouge.py [--data ../shared/data] [--repeats 3]``.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

_SENTENCE = re.compile(r"<t>(.*?)</t>", re.S)


def sentences(text: str) -> list[str]:
    """Split a REALSumm text on its ``<t> ... </t>`` sentence markers."""
    return [s.strip() for s in _SENTENCE.findall(text)]


def load_pairs(data: Path) -> list[tuple[list[str], list[str]]]:
    """The (summary, reference) sentence lists of ``realsumm/realsumm_scores.jsonl``."""
    pairs = []
    with open(data / "realsumm" / "realsumm_scores.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            pairs.append((sentences(row["summary"]), sentences(row["reference"])))
    return pairs


def time_metaeval(pairs) -> float:
    from metaeval.metrics import Rouge
    from metaeval.metrics import rouge_tokenize

    rouge_tokenize._STEMS.clear()  # cold stem cache: no advantage from earlier repetitions
    start = time.perf_counter()
    rouge = Rouge(n=2, stem=True)
    for summary, reference in pairs:
        rouge.score(summary, [reference])
    return time.perf_counter() - start


def time_metaeval_no_text_cache(pairs) -> float:
    """As :func:`time_metaeval` with a new scorer per pair: no reuse of the repeated references."""
    from metaeval.metrics import Rouge
    from metaeval.metrics import rouge_tokenize

    rouge_tokenize._STEMS.clear()
    start = time.perf_counter()
    for summary, reference in pairs:
        Rouge(n=2, stem=True).score(summary, [reference])
    return time.perf_counter() - start


def time_rouge_score(pairs) -> float:
    from rouge_score import rouge_scorer

    start = time.perf_counter()
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeLsum"], use_stemmer=True)
    for summary, reference in pairs:
        scorer.score("\n".join(reference), "\n".join(summary))
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if not (args.data / "realsumm" / "realsumm_scores.jsonl").exists():
        print(f"REALSumm data not found under {args.data}", file=sys.stderr)
        return 2
    pairs = load_pairs(args.data)
    ours, uncached, theirs = [], [], []
    for _ in range(args.repeats):  # interleaved, so that load on the machine hits both alike
        ours.append(time_metaeval(pairs))
        uncached.append(time_metaeval_no_text_cache(pairs))
        theirs.append(time_rouge_score(pairs))
    n = len(pairs)
    best_ours, best_uncached, best_theirs = n / min(ours), n / min(uncached), n / min(theirs)
    print(f"pairs: {n} (ROUGE-1, ROUGE-2, summary-level ROUGE-L, stemming; best of {args.repeats})")
    print(f"metaeval Rouge(n=2, stem=True):              {best_ours:9.1f} pairs/s")
    print(f"metaeval, new scorer per pair (no text reuse): {best_uncached:7.1f} pairs/s")
    print(f"rouge-score rouge1/rouge2/rougeLsum:         {best_theirs:9.1f} pairs/s")
    print(f"ratio metaeval / rouge-score:                {best_ours / best_theirs:9.2f}x")
    print(f"ratio without text reuse:                    {best_uncached / best_theirs:9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
