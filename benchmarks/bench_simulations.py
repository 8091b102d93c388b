"""Speed of the simulations of Deutsch, Dror & Roth (2021), Sec. 5, on the packaged data.

Run: `.venv/bin/python benchmarks/bench_simulations.py [--quick]`. Prints the wall time of

* the coverage simulation (Table 1): QAEval-F1 vs the human score, 1000 trials, Fisher and
  BOOT-SYSTEMS/INPUTS/BOTH with 1000 resamples, system and summary level, Kendall tau-b, on SummEval and
  on REALSumm (target: <= 2 minutes each);
* the power simulation (Figure 3) on SummEval: 11 proportions x 1000 trials x 3 tests (PERM-BOTH,
  BOOT-BOTH, Williams) x 2 levels, Pearson, 1000 resamples each (target: <= 10 minutes).

Texts come from ../shared/data (they are not packaged). `--quick` runs 50 trials to check the setup.
Wall time depends on what else runs on the machine; the CPU time of the process is printed beside it.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import metaeval as me

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-power", action="store_true")
    args = parser.parse_args()
    trials = 50 if args.quick else 1000
    for name, human in (("summeval", "expert.relevance"), ("realsumm", "litepyramid.recall")):
        ds = me.load_dataset(name)
        start, cpu = time.perf_counter(), time.process_time()
        res = me.simulate_coverage(ds, "qa-eval.f1", human, n_trials=trials, rng=0)
        elapsed, used = time.perf_counter() - start, time.process_time() - cpu
        print(f"coverage {name}: {trials} trials in {elapsed:.1f} s wall, {used:.1f} s CPU (target <= 120 s)",
              flush=True)
        print(res.table().round(3).to_string(), flush=True)
    if args.skip_power:
        return
    ds = me.load_dataset("summeval")
    candidates, references = me.load_texts("summeval", directory=DATA)
    start, cpu = time.perf_counter(), time.process_time()
    res = me.simulate_power(ds, "expert.relevance", candidates=candidates, references=references, n_trials=trials,
                            rng=0)
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    print(f"power summeval: 11 proportions x {trials} trials in {elapsed:.1f} s wall, {used:.1f} s CPU "
          "(target <= 600 s)", flush=True)
    for level in res.levels:
        print(f"-- {level} level", flush=True)
        print(res.table(level).round(3).to_string(), flush=True)


if __name__ == "__main__":
    main()
