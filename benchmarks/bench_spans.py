"""Span statistics at scale: 10 detectors x 30,000 segments, BOOT-BOTH intervals and the all-pairs permutation
matrix (45 pairs, PERM-BOTH) at k = 1000.

Run: `PYTHONPATH=src python benchmarks/bench_spans.py` (options: --resamples K, --systems N, --segments M).
Synthetic spans: 10 systems x 3,000 segments of 120 characters, gold and 10 detectors with 0-4 spans per
segment. The spans are reduced once to per-segment counts (timed separately: "reduce", with greedy and with
optimal matching, alternated in the same run); the statistics
(target <= 5 s) resample the counts. In the same run, the naive path - build every resampled matrix of counts
by indexing and sum it, one resample at a time, and one permutation at a time per pair - is timed on a
few resamples and extrapolated linearly in k (marked `~`), and the ratio printed.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def spans_data(n_systems, n_segments, n_detectors, rng):
    from metaeval.spans import Span, SpanAnnotations

    targets = {(f"s{a}", str(b)): "x" * 120 for a in range(n_systems) for b in range(n_segments)}

    def spans():
        out = {}
        for c in targets:
            k = int(rng.integers(0, 5))
            starts = rng.integers(0, 110, size=k)
            lengths = rng.integers(1, 11, size=k)
            out[c] = [Span(int(s), int(s + l), "major" if rng.random() < 0.3 else "minor") for s, l in zip(starts, lengths)]
        return out
    gold = SpanAnnotations("gold", spans(), targets)
    return gold, [SpanAnnotations(f"det{d}", spans(), targets) for d in range(n_detectors)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--segments", type=int, default=3000)
    parser.add_argument("--detectors", type=int, default=10)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from metaeval.spans.channels import finisher as _finish
    from metaeval.spans.channels import span_channels
    from metaeval.spans.resampling import bootstrap_statistics, intervals, permutation_pvalues
    from metaeval.stats.resampling.draws import bootstrap_draws, permutation_draws

    rng = np.random.default_rng(0)
    gold, detectors = spans_data(args.systems, args.segments, args.detectors, rng)
    reduce_s = {}
    for matching in ("greedy", "optimal", "greedy", "optimal"):  # alternated, the better of two runs each
        t0 = time.perf_counter()
        channels, present, (systems, segments) = span_channels(gold, detectors, measure="partial", severity="ignore",
                                                               averaging="micro", matching=matching)
        reduce_s[matching] = min(reduce_s.get(matching, np.inf), time.perf_counter() - t0)
    finish = _finish("micro")
    k = args.resamples
    t0 = time.perf_counter()
    bd = bootstrap_draws(len(systems), len(segments), method="both", n_resamples=k, rng=1)
    intervals(bootstrap_statistics(channels, present, bd, finish), 0.95)
    boot_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pd = permutation_draws(len(systems), len(segments), method="both", n_resamples=k, rng=2)
    permutation_pvalues(channels, present, pd, finish)
    perm_s = time.perf_counter() - t0

    # naive path on a few resamples, extrapolated linearly in k
    few = 5
    t0 = time.perf_counter()
    for s in range(few):
        rows, cols = bd.rows[s], bd.cols[s]
        finish(channels[:, :, rows][:, :, :, cols].sum(axis=(2, 3))[None], None)
    naive_boot = (time.perf_counter() - t0) / few * k
    t0 = time.perf_counter()
    masks = pd.mask(slice(0, 1))
    d = channels.shape[0]
    for i in range(d):
        for j in range(i + 1, d):
            m = masks[0]
            a = np.where(m, channels[j], channels[i]).sum(axis=(1, 2))
            b = np.where(m, channels[i], channels[j]).sum(axis=(1, 2))
            finish(np.stack([a, b])[None], None)
    naive_perm = (time.perf_counter() - t0) * k
    n_cells = int(present.sum())
    print(f"{args.detectors} detectors x {n_cells} segments ({len(systems)} systems x {len(segments)}), k = {k}")
    for matching, seconds in reduce_s.items():
        print(f"reduce spans to counts ({matching + ' matching':>16}): {seconds:7.2f} s")
    print(f"BOOT-BOTH intervals, every detector:     {boot_s:7.2f} s   naive ~{naive_boot:7.1f} s  "
          f"(x{naive_boot / boot_s:.0f})")
    print(f"PERM-BOTH all {d * (d - 1) // 2} pairs:                  {perm_s:7.2f} s   naive ~{naive_perm:7.1f} s  "
          f"(x{naive_perm / perm_s:.0f})")
    print(f"statistics total (target <= 5 s):        {boot_s + perm_s:7.2f} s")


if __name__ == "__main__":
    main()
