"""Regenerate docs/img/qarla-summeval.png and docs/img/qarla-summeval-sets.png: QARLA on all of SummEval.

Amigo, Gonzalo, Penas & Verdejo (ACL-05 workshop, "Evaluating DUC 2004 Tasks with the QARLA Framework")
on SummEval instead of DUC 2004 (not in ../shared/data): the 11 references of each of the 100 inputs are the
models, the 16 systems the peers, expert relevance (mean of 3 experts) the human score.

1. :func:`metaeval.qarla_similarities` over all 100 inputs for the similarities of ``SIMILARITIES``;
2. :func:`metaeval.qarla` for each similarity alone and for a few sets -> ``qarla-summeval.png`` (the
   ``metaeval qarla --plot`` figure) and ``qarla-summeval.json`` (the result);
3. every non-empty subset of ``SEARCH`` (1023 sets, as the paper's Figure 5): KING against the Pearson r of
   the system-level QUEEN with the experts -> ``qarla-summeval-sets.png`` (and the numbers in the JSON).

    PYTHONPATH=src python scripts/qarla_figure.py --texts-dir ../shared/data
"""
from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np

import metaeval as me
from metaeval.report.qarla_figure import save_qarla_figure
from metaeval.report.svg import new_figure

SIMILARITIES = ("rouge-1", "rouge-2", "rouge-l", "rouge-su4", "rouge-w-1.2.b", "rouge-2.c",
                "rpre-1", "rpre-2", "rpre-l", "rpre-su4", "rpre-w-1.2.b", "rpre-2.c", "tvm-8", "tvm-64", "tvm-512")
SETS = ("rpre-w-1.2.b+tvm-512", "rpre-w-1.2.b+tvm-8", "rouge-2+rpre-2", "rpre-2.c+tvm-8")
SEARCH = ("rouge-1", "rouge-2", "rouge-l", "rouge-su4", "rpre-1", "rpre-2", "rpre-w-1.2.b", "rpre-2.c", "tvm-8",
          "tvm-64")


def draw_sets(king: np.ndarray, pearson: np.ndarray, sizes: np.ndarray, path: Path, title: str) -> None:
    with new_figure(6.0, 4.0) as (fig, ax):
        points = ax.scatter(king, pearson, c=sizes, s=8, cmap="viridis", alpha=0.8)
        fig.colorbar(points, ax=ax, label="metrics in the set")
        ax.set_xlabel("KING of the metric set")
        ax.set_ylabel("Pearson r, system QUEEN vs expert relevance")
        ax.set_title(title, fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts-dir", default="../shared/data")
    parser.add_argument("--output", default="docs/img/qarla-summeval.png")
    args = parser.parse_args()
    candidates, references = me.load_texts("summeval", directory=args.texts_dir, all_references=True)
    ds = me.load_dataset("summeval")
    start = time.perf_counter()
    sims = me.qarla_similarities(candidates, references, similarities=SIMILARITIES)
    similarity_seconds = time.perf_counter() - start
    start = time.perf_counter()
    result = me.qarla(sims, metric_sets=[*SIMILARITIES, *SETS], ds=ds, human="expert.relevance")
    qarla_seconds = time.perf_counter() - start
    out = Path(args.output)
    save_qarla_figure(result, out)
    subsets = [c for k in range(1, len(SEARCH) + 1) for c in itertools.combinations(SEARCH, k)]
    start = time.perf_counter()
    search = me.qarla(sims, metric_sets=subsets, ds=ds, human="expert.relevance")
    search_seconds = time.perf_counter() - start
    sizes = np.array([len(s) for s in subsets])
    rho = float(np.corrcoef(np.argsort(np.argsort(search.king)), np.argsort(np.argsort(search.pearson)))[0, 1])
    best = int(np.argmax(search.king))
    draw_sets(search.king, search.pearson, sizes, out.with_name(out.stem + "-sets.png"),
              f"SummEval, all {len(subsets)} subsets of {len(SEARCH)} similarities (Spearman {rho:.2f})")
    data = result.to_dict()
    data["timing_seconds"] = {"similarities": round(similarity_seconds, 1), "qarla": round(qarla_seconds, 1),
                              "search": round(search_seconds, 1)}
    data["search"] = {"similarities": list(SEARCH), "n_sets": len(subsets), "spearman_king_pearson": round(rho, 4),
                      "best_king_set": search.metric_sets[best], "best_king": float(search.king[best]),
                      "best_king_pearson": float(search.pearson[best]),
                      "best_pearson_set": search.metric_sets[int(np.argmax(search.pearson))],
                      "best_pearson": float(search.pearson.max())}
    out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    print(result.to_frame().round(3).to_string())
    print(json.dumps(data["search"], indent=1))
    print(json.dumps(data["timing_seconds"]))


if __name__ == "__main__":
    main()
