"""Regenerate docs/img/power-summeval.png: the power simulation of Deutsch, Dror & Roth (2021), Figure 3.

Runs :func:`metaeval.simulate_power` on SummEval (expert relevance) with the paper's ROUGE-1 variant (F1,
its footnote 9), writes the power table as JSON next to the figure and draws one panel per level (power
against the share k of tokens kept, one line per test), as the paper's Figure 3.

    PYTHONPATH=src python scripts/power_figure.py --n-trials 200 --texts-dir ../shared/data

``--rouge-variant recall`` and ``--x-metric rouge-1.f1`` give the variants discussed in docs/simulations.md.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import metaeval as me

LABELS = {"perm-both": "PERM-BOTH", "boot-both": "BOOT-BOTH", "williams": "Williams"}


def draw(result, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(result.levels), figsize=(4.2 * len(result.levels), 3.4), sharey=True)
    for ax, level in zip(axes, result.levels):
        table = result.table(level)
        ks = [100 * p for p in result.proportions]
        for test in result.tests:
            ax.plot(ks, table.loc[test].to_numpy(), marker="o", markersize=3, label=LABELS[test])
        ax.set_title(f"{level} level")
        ax.set_xlabel("k (% of tokens kept)")
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("power")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts-dir", default="../shared/data")
    parser.add_argument("--n-trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rouge-variant", default=None)
    parser.add_argument("--x-metric", default=None)
    parser.add_argument("--output", default="docs/img/power-summeval.png")
    args = parser.parse_args()
    ds = me.load_dataset("summeval")
    candidates, references = me.load_texts("summeval", directory=args.texts_dir)
    start = time.perf_counter()
    result = me.simulate_power(ds, "expert.relevance", candidates=candidates, references=references,
                               n_trials=args.n_trials, rouge_variant=args.rouge_variant, x_metric=args.x_metric,
                               rng=args.seed)
    wall = time.perf_counter() - start
    out = Path(args.output)
    x = f", X = {result.x_metric}" if result.x_metric else ""
    title = (f"SummEval, Pearson: power against ROUGE-1 {result.rouge_variant} on k% of tokens "
             f"({result.n_trials} trials{x}, seed {args.seed})")
    draw(result, out, title)
    data = result.to_dict()
    data["wall_seconds"] = round(wall, 1)
    out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    for level in result.levels:
        print(level)
        print(result.table(level).round(3).to_string())
    print(f"{wall:.1f} s; {out}")


if __name__ == "__main__":
    main()
