"""Speed of QARLA (docs/qarla.md) on SummEval: 16 peers and 11 models per input, texts from ../shared/data.

Run: `.venv/bin/python benchmarks/bench_qarla.py [--inputs N]`. Prints, each against a baseline timed in
the same run (ratios, since the wall time depends on what else runs on the machine):

* similarities: ROUGE-1/2/L/SU4 between the 27 x 27 ordered summary pairs of each input, metaeval's way
  (one ROUGE-1.5.5 statistics call per pair gives every measure; Rpre is the transpose) against one scorer
  per measure and Rpre recomputed (8 calls per pair);
* probabilities: QUEEN, KING and JACK of one metric by :func:`metaeval.stats.frameworks.qarla.qarla_arrays`
  (vectorized over inputs, texts and model triples) against the formulas as Python loops.
"""
from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np

import metaeval as me
from metaeval.metrics.rouge import Rouge
from metaeval.stats.frameworks.qarla import qarla_arrays

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def loops(sim: np.ndarray, p: int) -> tuple[float, float]:
    """KING and JACK of ``sim`` by the formulas, in Python loops (the baseline)."""
    _, t_, k_, _ = sim.shape
    m_ = k_ - p

    def q(t, c, models):
        trip = list(itertools.permutations(models, 3))
        return sum(all(sim[x, t, c, p + a] >= sim[x, t, p + b, p + d] for x in range(sim.shape[0]))
                   for a, b, d in trip) / len(trip)

    kings, jacks = [], []
    for t in range(t_):
        qp = [q(t, a, range(m_)) for a in range(p)]
        for k in range(m_):
            rest = [j for j in range(m_) if j != k]
            own = q(t, p + k, rest)
            kings.append(all(own > q(t, a, rest) for a in range(p)))
            jacks.append(any(all(sim[x, t, a, b] <= sim[x, t, a, p + k] and sim[x, t, b, a] <= sim[x, t, b, p + k]
                                 for x in range(sim.shape[0])) and qp[a] > 0 and qp[b] > 0
                             for a in range(p) for b in range(p) if a != b))
    return float(np.mean(kings)), float(np.mean(jacks))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", type=int, default=10)
    args = parser.parse_args()
    candidates, references = me.load_texts("summeval", directory=DATA, all_references=True)
    names = ["rouge-1", "rouge-2", "rouge-l", "rouge-su4", "rpre-1", "rpre-2", "rpre-l", "rpre-su4"]
    start = time.perf_counter()
    sims = me.qarla_similarities(candidates, references, similarities=names, inputs=args.inputs)
    ours = time.perf_counter() - start

    start = time.perf_counter()
    scorers = {"rouge-1": Rouge(n=1, lcs=False), "rouge-2": Rouge(n=2, lcs=False), "rouge-l": Rouge(n=0),
               "rouge-su4": Rouge(n=0, lcs=False, skip_distance=4, skip_unigrams=True)}
    for label in sims.inputs:
        texts = [candidates[s][label] for s in sims.systems] + list(references[label])
        for u, v in itertools.product(range(len(texts)), repeat=2):
            for measure, scorer in scorers.items():
                scorer.score(texts[u], [texts[v]])[measure]["recall"]  # R(u, v)
                scorer.score(texts[v], [texts[u]])[measure]["recall"]  # Rpre(u, v) = R(v, u)
    baseline = time.perf_counter() - start
    print(f"similarities, {len(names)} metrics x {args.inputs} inputs: {ours:.2f} s; one scorer per measure and "
          f"Rpre recomputed: {baseline:.2f} s; ratio {baseline / ours:.1f}x", flush=True)

    one = sims.subset(["rpre-2"])[:, :3]
    p = len(sims.systems)
    start = time.perf_counter()
    for _ in range(5):
        fast = qarla_arrays(one, p)
    vectorized = (time.perf_counter() - start) / 5
    start = time.perf_counter()
    slow = loops(one, p)
    looped = time.perf_counter() - start
    assert abs(slow[0] - fast.king) < 1e-12 and abs(slow[1] - fast.jack) < 1e-12
    print(f"QUEEN/KING/JACK of rpre-2 on 3 inputs: vectorized {vectorized * 1e3:.1f} ms, loops {looped:.2f} s; "
          f"ratio {looped / vectorized:.0f}x (same KING {fast.king:.4f}, JACK {fast.jack:.4f})", flush=True)
    every = sims.subset(["rpre-2"])
    start = time.perf_counter()
    qarla_arrays(every, p)
    print(f"QUEEN/KING/JACK of rpre-2 on {args.inputs} inputs: {(time.perf_counter() - start) * 1e3:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
