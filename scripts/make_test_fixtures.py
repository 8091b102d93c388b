"""Write the small generated fixtures of tests/data (deterministic; run from the repository root).

- ``tests/data/frank/``: data shaped like FRANK (Pagnoni et al. 2021), generated, not FRANK's files:
  ``human_annotations.json`` (a JSON array of records: hash, model_name, dataset, split, article,
  summary, Factuality, per-sentence annotation records) and ``baseline_factuality_metrics_outputs.json``
  (hash, model_name, split, metric columns with FRANK's names; some QAGS values null). Systems score
  within-system factuality differently, so partial and global correlations differ.
- ``tests/data/mt-metrics-eval/wmtfix/``: the mt-metrics-eval layout for one language pair (3 systems +
  a reference, 5 segments): human-scores/en-de.mqm.seg.score, human-scores/en-de.mqm.sys.score,
  metric-scores/en-de/{BLEU,COMET}-refA.{seg,sys}.score.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1] / "tests" / "data"
CNNDM = ["bart", "pgn", "bus", "bert_sum", "s2s"]
BBC = ["TranS2S", "TConvS2S", "PtGen", "BERTS2S"]


def frank(rng: np.random.Generator) -> None:
    out = ROOT / "frank"
    out.mkdir(parents=True, exist_ok=True)
    humans, metrics = [], []
    for dataset, models, n_docs in (("cnndm", CNNDM, 24), ("bbc", BBC, 16)):
        effects = rng.normal(0, 0.15, size=len(models))
        for d in range(n_docs):
            doc = hashlib.sha1(f"{dataset}-{d}".encode()).hexdigest()
            split = "test" if d % 3 else "valid"
            for model, effect in zip(models, effects):
                latent = rng.normal()
                factuality = float(np.clip(0.6 + effect + 0.15 * latent + rng.normal(0, 0.1), 0, 1))
                sentences = int(rng.integers(1, 4))
                humans.append({
                    "hash": doc, "model_name": model, "dataset": dataset, "split": split,
                    "article": f"Article {d} of {dataset}.", "summary": f"Summary by {model}.",
                    "Factuality": round(factuality, 4),
                    "summary_sentences_annotations": [{"annotator_0": ["NoE"], "annotator_1": ["RelE"]}] * sentences,
                })
                qags = None if rng.random() < 0.1 else round(float(0.5 + 0.2 * latent + 3 * effect + rng.normal(0, 0.1)), 4)
                metrics.append({
                    "hash": doc, "model_name": model, "split": split,
                    "Rouge L": round(float(0.3 + 2 * effect + rng.normal(0, 0.05)), 4),
                    "BertScore P Art": round(float(0.8 + 0.05 * latent + rng.normal(0, 0.02)), 4),
                    "QAGS": qags,
                    "FactCC": round(float(np.clip(0.5 + 0.3 * latent + rng.normal(0, 0.3), 0, 1)), 4),
                })
    (out / "human_annotations.json").write_text(json.dumps(humans, indent=1) + "\n")
    (out / "baseline_factuality_metrics_outputs.json").write_text(json.dumps(metrics, indent=1) + "\n")


def mt_metrics_eval(rng: np.random.Generator) -> None:
    root = ROOT / "mt-metrics-eval" / "wmtfix"
    systems, m = ["sysA", "sysB", "sysC", "refB"], 5
    mqm = np.round(-rng.gamma(2.0, 2.0, size=(len(systems), m)), 3)
    mqm[1, 2] = np.nan
    files = {root / "human-scores" / "en-de.mqm.seg.score": mqm}
    for metric, noise in (("BLEU", 3.0), ("COMET", 0.5)):
        files[root / "metric-scores" / "en-de" / f"{metric}-refA.seg.score"] = np.round(
            mqm + noise * rng.normal(size=mqm.shape) + 10, 3)
    for path, values in list(files.items()):
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"{s}\t{'None' if np.isnan(v) else repr(float(v))}" for s, row in zip(systems, values) for v in row]
        path.write_text("\n".join(lines) + "\n")
        sys_path = path.with_name(path.name.replace(".seg.score", ".sys.score"))
        means = [float(np.round(np.nanmean(row), 4)) for row in values]
        sys_path.write_text("\n".join(f"{s}\t{v!r}" for s, v in zip(systems, means)) + "\n")


if __name__ == "__main__":
    frank(np.random.default_rng(2021))
    mt_metrics_eval(np.random.default_rng(22))
    print(f"wrote {ROOT}/frank and {ROOT}/mt-metrics-eval")
