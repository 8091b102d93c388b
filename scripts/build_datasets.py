"""Convert the public score files in ../shared/data into metaeval's packaged datasets.

Usage (from the repository root)::

    python scripts/build_datasets.py --shared ../shared/data [--output src/metaeval/data/packaged]

Writes one compressed ``.npz`` per packaged file (numbers and labels only; no article or summary
texts), ``manifest.json`` (scorers, humans, default human, description, source, licence per dataset)
and ``README.md`` (attribution), then prints what it checked in the sources: REALSumm's duplicated
BART, agreement of ``pyramid.jsonl`` with ``realsumm_scores.jsonl``, system ids of the extra metric
files, and how WMT19 system names were reconciled. The output is byte-for-byte reproducible.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import numpy as np

from metaeval.data.datasets import DEFAULT_GROUP, MANIFEST, MANIFEST_FORMAT, write_packaged_file
from metaeval.data.native import (
    REALSUMM_HUMAN,
    read_realsumm_scores,
    read_wmt19_system_scores,
    read_mqm_averages,
)
from metaeval.data.readers import read_scores
from metaeval.data.scoreset import ScoreSet

SUMMEVAL_FILES = ("relevance", "rouge", "bertscore", "moverscore", "qaeval", "s3", "meteor", "bewte", "autosummeng")
REALSUMM_EXTRA_FILES = ("qaeval", "s3", "meteor", "bewte", "autosummeng")
SUMMEVAL_DEFAULT_HUMAN = "expert.relevance"
WMT19_DEFAULT_PAIR = "de-en"
BART = "bart_out"

ATTRIBUTION = {
    "summeval": "SummEval (MIT) - Fabbri et al. 2021. stat-analysis-experiments (Apache-2.0) - Deutsch, Dror & Roth 2021.",
    "realsumm": "REALSumm (CC-BY-4.0) - Bhandari et al. 2020. stat-analysis-experiments (Apache-2.0) - Deutsch, Dror & Roth 2021.",
    "mqm": "WMT MQM (Apache-2.0) - Freitag et al. 2021.",
    "wmt19": "WMT19 metrics task - Ma et al. 2019.",
}
SOURCES = {
    "summeval": "SummEval human judgments and metric scores in the SacreROUGE line format, from"
                " CogComp/stat-analysis-experiments (files summeval/*.jsonl of ../shared/data).",
    "realsumm": "neulab/REALSumm realsumm_scores.jsonl (LitePyramid and 14 metric scores) and"
                " CogComp/stat-analysis-experiments (QAEval, S3, METEOR, BEwTE, AutoSummENG).",
    "mqm": "google/wmt-mqm-human-evaluation, newstest2020 averaged segment scores.",
    "wmt19": "WMT19 metrics task results: DA-syslevel.csv and baselines/*.sys.score.gz.",
}
LICENCES = {
    "summeval": "SummEval: MIT; stat-analysis-experiments: Apache-2.0",
    "realsumm": "REALSumm: CC-BY-4.0; stat-analysis-experiments: Apache-2.0",
    "mqm": "Apache-2.0",
    "wmt19": "not stated with the files; cite Ma et al. 2019",
}
CNN_NOTE = "CNN/DailyMail texts belong to their publishers and are not included: scores only."


def lower_cased(scoreset: ScoreSet) -> ScoreSet:
    """``scoreset`` with its scorers named in metaeval's vocabulary: lower case (``METEOR`` -> ``meteor``).

    The source files' names (``MoverScore``, ``BEwTE.f1``, ``AutoSummENG``) then equal the names that
    ``metaeval score`` writes for the same metric (docs/metrics.md, "Names and scales").
    """
    names = {s: s.lower() for s in scoreset.scorers}
    if len(set(names.values())) != len(names):
        raise SystemExit(f"{scoreset.name}: two scorers differ only in case: {sorted(names)}")
    return ScoreSet({names[s]: scoreset.annotations(s) for s in scoreset.scorers}, systems=scoreset.systems,
                    inputs=scoreset.inputs, humans=[names[h] for h in scoreset.humans], name=scoreset.name,
                    description=scoreset.description)


def natural_key(label: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", label)]


def merged(sets: list[ScoreSet], *, name: str, systems: list[str], inputs: list[str], first: tuple[str, ...] = (),
           humans: tuple[str, ...] = ()) -> ScoreSet:
    """One ScoreSet with every scorer of ``sets`` over exactly ``systems`` x ``inputs``."""
    scores: dict[str, np.ndarray] = {}
    for part in sets:
        if set(part.systems) != set(systems) or set(part.inputs) != set(inputs):
            raise SystemExit(f"{part.name}: systems or inputs differ from the other files of {name}")
        rows = [part.systems.index(s) for s in systems]
        cols = [part.inputs.index(x) for x in inputs]
        for scorer in part.scorers:
            if scorer in scores:
                raise SystemExit(f"{name}: scorer {scorer!r} appears in two files")
            array = part.annotations(scorer)
            scores[scorer] = array[rows][:, cols]
    order = [s for s in first if s in scores] + [s for s in scores if s not in first]
    return ScoreSet({s: scores[s] for s in order}, systems=systems, inputs=inputs, humans=humans, name=name)


def stacked(parts: list[ScoreSet], *, name: str, systems: list[str], inputs: list[str],
            humans: tuple[str, ...]) -> ScoreSet:
    """One ScoreSet whose rows come from ``parts`` (same scorers); a later part wins for a shared system."""
    scores = {}
    for scorer in parts[0].scorers:
        matrix = np.full((len(systems), len(inputs)), np.nan)
        for part in parts:
            cols = [part.inputs.index(x) for x in inputs]
            for i, system in enumerate(part.systems):
                matrix[systems.index(system)] = part.annotations(scorer)[i, cols]
        scores[scorer] = matrix
    return ScoreSet(scores, systems=systems, inputs=inputs, humans=humans, name=name)


def entry(scoreset: ScoreSet, *, file: str, description: str, default_human: str, kind: str,
          notes: list[str], systems: list[str] | None = None) -> dict:
    return {
        "description": description,
        "file": file,
        "systems": systems,
        "shape": list(scoreset.shape) if systems is None else [len(systems), len(scoreset.inputs)],
        "scorers": list(scoreset.scorers),
        "humans": list(scoreset.humans),
        "metrics": list(scoreset.metrics),
        "default_human": default_human,
        "annotators": {s: scoreset.n_annotators(s) for s in scoreset.scorers if scoreset.n_annotators(s) > 1},
        "options": {},
        "notes": notes,
        "source": SOURCES[kind],
        "licence": LICENCES[kind],
        "attribution": ATTRIBUTION[kind],
    }


def build_summeval(shared: Path, out: Path, manifest: dict, report: list[str]) -> None:
    sets = [lower_cased(read_scores(shared / "summeval" / f"{f}.jsonl", name=f)) for f in SUMMEVAL_FILES]
    systems = sorted(sets[0].systems, key=natural_key)
    inputs = sorted(sets[0].inputs)
    humans = tuple(sets[0].humans)
    first = (SUMMEVAL_DEFAULT_HUMAN, *sorted(h for h in humans if h != SUMMEVAL_DEFAULT_HUMAN))
    ds = merged(sets, name="summeval", systems=systems, inputs=inputs, first=first, humans=humans)
    write_packaged_file(out / "summeval.npz", {DEFAULT_GROUP: ds})
    description = (
        "SummEval (Fabbri et al. 2021): 16 CNN/DailyMail summarizers x 100 documents; expert (3 annotators)"
        " and crowd (turker, 5 annotators) ratings of coherence, consistency, fluency and relevance;"
        f" {len(ds.metrics)} automatic metric scores; default human: expert.relevance (mean of the 3 experts)."
    )
    notes = ["ROUGE (ROUGE-1.5.5 -n 4 -a -c 95 -r 1000 -p 0.5 -t 0 -d -m -2 4 -u -f A, single reference)"
             " and BEwTE values are x100, as in the source; the other metrics are on their native scales.",
             "Annotator order within a cell is the order of the source lists.", CNN_NOTE]
    manifest["summeval"] = entry(ds, file="summeval.npz", description=description,
                                 default_human=SUMMEVAL_DEFAULT_HUMAN, kind="summeval", notes=notes)
    report.append(f"summeval: {ds.shape[0]} x {ds.shape[1]}, {len(ds.scorers)} scorers ({len(ds.humans)} human)")


def check_pyramid(shared: Path, mix: ScoreSet, report: list[str]) -> None:
    pyramid = lower_cased(read_scores(shared / "realsumm" / "pyramid.jsonl", humans=["litepyramid.recall"]))
    pyramid = pyramid.subset(systems=mix.systems, inputs=mix.inputs)
    report.append(f"realsumm: pyramid.jsonl system ids match realsumm_scores.jsonl: {set(pyramid.systems) == set(mix.systems)}")
    agree = 0
    for scorer in pyramid.scorers:
        theirs, ours = pyramid.matrix(scorer), mix.matrix(scorer)
        differ = int((theirs != ours).sum())
        if not differ:
            agree += 1
            continue
        copy = np.array_equal(theirs, pyramid.matrix("bertscore.precision")) and scorer != "bertscore.precision"
        extra = " (it repeats pyramid.jsonl's bertscore.precision in every cell)" if copy else ""
        report.append(f"realsumm: pyramid.jsonl {scorer} differs from realsumm_scores.jsonl in {differ} of"
                      f" {ours.size} cells{extra}; realsumm_scores.jsonl is used")
    report.append(f"realsumm: pyramid.jsonl agrees exactly with realsumm_scores.jsonl on {agree} of"
                  f" {len(pyramid.scorers)} fields")


def build_realsumm(shared: Path, out: Path, manifest: dict, report: list[str]) -> None:
    splits = read_realsumm_scores(shared / "realsumm" / "realsumm_scores.jsonl")
    abs_, ext = splits["abs"], splits["ext"]
    same = all(np.array_equal(abs_.subset(systems=[BART]).matrix(s), ext.subset(systems=[BART]).matrix(s))
               for s in abs_.scorers)
    report.append(f"realsumm: abstractive and extractive {BART} scores identical: {same}")
    if not same:
        raise SystemExit("realsumm: the two bart_out copies differ; revisit the BART decision")
    mix_systems = sorted(set(abs_.systems) | set(ext.systems))
    inputs = sorted(ext.inputs, key=int)
    base = stacked([abs_, ext], name="realsumm", systems=mix_systems, inputs=inputs, humans=(REALSUMM_HUMAN,))
    extras = [lower_cased(read_scores(shared / "realsumm" / f"{f}.jsonl", name=f)) for f in REALSUMM_EXTRA_FILES]
    for extra in extras:
        report.append(f"realsumm: {extra.name}.jsonl system ids match realsumm_scores.jsonl:"
                      f" {set(extra.systems) == set(mix_systems)}; inputs match: {set(extra.inputs) == set(inputs)}")
    mix = merged([base, *extras], name="realsumm", systems=mix_systems, inputs=inputs, first=(REALSUMM_HUMAN,),
                 humans=(REALSUMM_HUMAN,))
    check_pyramid(shared, mix, report)
    for split, part in splits.items():
        sub = mix.subset(systems=part.systems)
        exact = all(np.array_equal(sub.matrix(s), part.matrix(s), equal_nan=True) for s in part.scorers)
        report.append(f"realsumm-{split}: equals realsumm_scores.jsonl split {split!r}: {exact}")
    write_packaged_file(out / "realsumm.npz", {DEFAULT_GROUP: mix})
    bart = (f"The abstractive {BART} of the source is an upstream copy of the extractive one (identical outputs and"
            f" scores); the mix keeps it once, as {BART} with the extractive copy's scores.")
    common = (" x 100 CNN/DailyMail documents; human: LitePyramid recall (litepyramid.recall);"
              f" {len(mix.metrics)} metric scores.")
    notes = ["ROUGE, JS-2, MoverScore and BERTScore come from realsumm_scores.jsonl (ROUGE as fractions, 0-1);"
             " QAEval, S3, METEOR, BEwTE and AutoSummENG from stat-analysis-experiments (BEwTE x100).",
             "pyramid.jsonl of stat-analysis-experiments is not used: its bertscore.f1 repeats bertscore.precision.",
             bart, CNN_NOTE]
    manifest["realsumm"] = entry(mix, file="realsumm.npz", kind="realsumm", default_human=REALSUMM_HUMAN, notes=notes,
                                 description=f"REALSumm (Bhandari et al. 2020), mix: 24 systems (BART once){common}"
                                             f" {bart}")
    for split, word in (("abs", "abstractive"), ("ext", "extractive")):
        systems = list(splits[split].systems)
        manifest[f"realsumm-{split}"] = entry(
            mix, file="realsumm.npz", kind="realsumm", default_human=REALSUMM_HUMAN, notes=notes, systems=systems,
            description=f"REALSumm (Bhandari et al. 2020), the {len(systems)} {word} systems{common}"
                        f" {BART} is included (the source's abstractive {BART} is an upstream copy of the"
                        " extractive one, with identical scores).")
    report.append(f"realsumm: mix {mix.shape}, abs {len(abs_.systems)}, ext {len(ext.systems)}")


def build_mqm(shared: Path, out: Path, manifest: dict, report: list[str]) -> None:
    for pair, words in (("ende", "English-German"), ("zhen", "Chinese-English")):
        ds = read_mqm_averages(shared / "wmt" / f"mqm_newstest2020_{pair}.avg_seg_scores.tsv", name=f"wmt20-mqm-{pair}")
        file = f"wmt20-mqm-{pair}.npz"
        write_packaged_file(out / file, {DEFAULT_GROUP: ds})
        human_refs = [s for s in ds.systems if s.startswith("Human-")]
        description = (
            f"WMT20 MQM (Freitag et al. 2021), {words} newstest2020: {ds.shape[0]} systems (including the human"
            f" translations {', '.join(human_refs)}) x {ds.shape[1]} segments; human: mqm = minus the weighted MQM"
            " error count averaged over raters (higher is better). No metric scores ship with it: add your"
            " own with read_scores."
        )
        missing = int(np.isnan(ds.matrix("mqm")).sum())
        notes = [f"{missing} unrated (None) cells in the source."]
        manifest[f"wmt20-mqm-{pair}"] = entry(ds, file=file, kind="mqm", default_human="mqm", notes=notes,
                                              description=description)
        report.append(f"wmt20-mqm-{pair}: {ds.shape}, {missing} missing")


def build_wmt19(shared: Path, out: Path, manifest: dict, report: list[str]) -> None:
    base = shared / "wmt" / "wmt19"
    result = read_wmt19_system_scores(base / "DA-syslevel.csv", base / "baselines")
    pairs = sorted(result.scoresets)
    write_packaged_file(out / "wmt19-da-sys.npz", {p: result.scoresets[p] for p in pairs})
    default = result.scoresets[WMT19_DEFAULT_PAIR]
    info = entry(default, file="wmt19-da-sys.npz", kind="wmt19", default_human="da.z", notes=list(result.notes),
                 description=(
                     "WMT19 metrics task (Ma et al. 2019), system level: one language pair at a time"
                     f" (language_pair=, default {WMT19_DEFAULT_PAIR}), N systems x one input 'newstest2019';"
                     " human: da.z (DA z-score); 10 baseline metrics (bleu and nist from mteval-inter,"
                     " sacrebleu-bleu, sacrebleu-chrf, chrf, chrf+, ter, wer, per, cder; the last four are"
                     " error rates, stored as the files hold them: higher is better). Only system-level"
                     " correlations are defined."))
    info["options"] = {"language_pair": {"default": WMT19_DEFAULT_PAIR, "choices": pairs}}
    info["shapes"] = {p: list(result.scoresets[p].shape) for p in pairs}
    del info["shape"]
    info["notes"] = info["notes"] + ["Systems with metric scores but no DA score are dropped; cs-de has no DA"
                                     " scores and is not offered."]
    manifest["wmt19-da-sys"] = info
    report.extend(f"wmt19: {note}" for note in result.notes)
    report.append(f"wmt19: {len(pairs)} language pairs: " + ", ".join(f"{p} {result.scoresets[p].shape[0]}" for p in pairs))


def write_readme(out: Path, manifest: dict) -> None:
    lines = ["# Packaged datasets", "",
             "Generated by `scripts/build_datasets.py` from the public files in `../shared/data`; do not edit.",
             "Scores and labels only (compressed `.npz`, read with `numpy.load(allow_pickle=False)`); see",
             "`docs/data.md` and `manifest.json`.", "", "| dataset | shape | humans | source | licence |",
             "|---|---|---|---|---|"]
    for name, info in manifest.items():
        shape = "x".join(map(str, info["shape"])) if "shape" in info else "per language pair"
        lines.append(f"| {name} | {shape} | {', '.join(info['humans'])} | {info['source']} | {info['licence']} |")
    lines += ["", "## Licences and attribution", ""]
    lines += [f"- {text}" for text in ATTRIBUTION.values()]
    lines += ["- CNN/DailyMail texts belong to their publishers: no article or summary text is included.", ""]
    (out / "README.md").write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, required=True, help="the shared data directory (../shared/data)")
    parser.add_argument("--output", type=Path,
                        default=Path(__file__).resolve().parents[1] / "src" / "metaeval" / "data" / "packaged")
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    manifest: dict = {}
    report: list[str] = []
    build_summeval(args.shared, args.output, manifest, report)
    build_realsumm(args.shared, args.output, manifest, report)
    build_mqm(args.shared, args.output, manifest, report)
    build_wmt19(args.shared, args.output, manifest, report)
    order = ["summeval", "realsumm", "realsumm-abs", "realsumm-ext", "wmt20-mqm-ende", "wmt20-mqm-zhen", "wmt19-da-sys"]
    manifest = {name: manifest[name] for name in order}
    text = json.dumps({"format": MANIFEST_FORMAT, "datasets": manifest}, indent=1, ensure_ascii=False) + "\n"
    (args.output / MANIFEST).write_text(text, encoding="utf-8")
    write_readme(args.output, manifest)
    total = sum(p.stat().st_size for p in args.output.iterdir() if p.is_file())
    report.append(f"total packaged size: {total / 1e6:.2f} MB in {args.output}")
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
