"""Oracle: sted19/span-mt-metaeval's own span-level code (commit afdfb6b) run on the WMT23 MQM ratings,
rater A's errors as the "automatic" evaluation and rater B's as the human one, on the cells both rated.

Run OUTSIDE the project:  cd /tmp/spans2ref && PYTHONPATH=src python oracle.py FILE.tsv.gz
Independent TSV parser (no metaeval import). Categories are passed lower-cased: the reference asserts a
zero-score error has a lower-case "source issue" / "creative reinterpretation" category."""
import gzip, json, sys, itertools
from collections import defaultdict
from mt_evaluation.core import Error, HumanEvaluation, Sample
from mt_evaluation.meta_evaluation.span_level.standardization import standardize_human_error
from mt_evaluation.meta_evaluation.span_level.utils import compute_tp_fp_fn_with_error_matching
from mt_evaluation.meta_evaluation.span_level.metrics import (MicroMetrics, MacroMetrics,
                                                               compute_p_r_f1_from_tp_fp_fn)


def unmark(text):
    out, spans, start = [], [], None
    i = 0
    while i < len(text):
        if text.startswith("<v>", i):
            start = len("".join(out)); i += 3; continue
        if text.startswith("</v>", i):
            spans.append((start, len("".join(out)))); start = None; i += 4; continue
        out.append(text[i]); i += 1
    s = "".join(out)
    if start is not None:
        spans.append((start, len(s)))
    return s, spans


def google_weight(sev, cat):
    c = cat.lower()
    if "source issue" in c or "source error" in c or "creative reinterpretation" in c:
        return 0.0
    if c.startswith("non-translation"):
        return 25.0
    if sev == "minor" and c == "fluency/punctuation":
        return 0.1
    return {"major": 5.0, "minor": 1.0, "neutral": 0.0, "critical": 10.0}[sev]


def read(path):
    rows = gzip.open(path, "rt", encoding="utf-8").read().split("\n")
    head = rows[0].split("\t")
    ix = {h: i for i, h in enumerate(head)}
    seg = "globalSegId" if "globalSegId" in ix else "seg_id"
    errors = defaultdict(list)     # (rater, cell) -> [Error]
    texts = {}
    rated = defaultdict(set)
    for line in rows[1:]:
        if not line.strip():
            continue
        c = line.rstrip("\r").split("\t")
        sev = c[ix["severity"]].strip().lower()
        if sev == "hotw-test":
            continue
        cell = (c[ix["system"]].strip(), c[ix["seg" if False else seg]].strip())
        rater = c[ix["rater"]].strip()
        tgt, tspans = unmark(c[ix["target"]])
        src, sspans = unmark(c[ix["source"]])
        old_src, old_tgt = texts.get(cell, ("", ""))   # the longest source and target (trailing spaces)
        texts[cell] = (src if len(src) > len(old_src) else old_src, tgt if len(tgt) > len(old_tgt) else old_tgt)
        rated[rater].add(cell)
        if sev == "no-error":
            continue
        cat = c[ix["category"]].strip()
        for side, text, spans in (("t", tgt, tspans), ("s", src, sspans)):
            for a, b in spans:
                errors[(rater, cell)].append(Error(span=text[a:b], category=cat.lower(), severity=sev, start=a, end=b,
                                                   is_source_error=side == "s", score=-google_weight(sev, cat)))
    return errors, texts, rated


def key(e):  # metaeval's order of spans: (start, end, severity, category, side)
    return (e.start, e.end, e.severity, e.category, "source" if e.is_source_error else "target")


def standardized(errs, sample, counts):
    out = []
    for e in errs:
        if e.start == e.end:
            counts["empty"] += 1
            continue
        new, sev_f, cat_f, ill, zero = standardize_human_error(Error(**vars(e)), sample, ["minor", "major", "critical"],
                                                               "All", True)
        if new is None:
            counts["severity" if sev_f else "score_0" if zero else "ill_formed"] += 1
            continue
        out.append(new)
    return sorted(out, key=key)


def main(path):
    errors, texts, rated = read(path)
    raters = sorted(rated)
    result = {"pairs": {}, "left_out": None}
    counts_all = defaultdict(int)
    for rater in raters:
        for cell in rated[rater]:
            src, tgt = texts[cell]
            standardized(errors.get((rater, cell), []), Sample(src=src, tgt=tgt, src_lang="x", tgt_lang="y"),
                         counts_all)
    result["left_out"] = dict(counts_all)
    names = {"Exact\nMatch": "exact", "Partial\nOverlap": "overlap", "Character\nProportion": "partial"}
    for a, b in itertools.permutations(raters, 2):
        both = sorted(rated[a] & rated[b])
        if not both:
            continue
        out = {}
        for greedy, penalty in ((False, 0.0), (True, 0.0), (False, 1.0)):
            micro = {n: MicroMetrics() for n in names}
            macro = {n: MacroMetrics() for n in names}
            for cell in both:
                src, tgt = texts[cell]
                sample = Sample(src=src, tgt=tgt, src_lang="x", tgt_lang="y")
                dummy = defaultdict(int)
                auto = HumanEvaluation(score=0.0, errors=standardized(errors.get((a, cell), []), sample, dummy))
                gold = HumanEvaluation(score=0.0, errors=standardized(errors.get((b, cell), []), sample, dummy))
                res = compute_tp_fp_fn_with_error_matching(auto, gold, src, tgt, penalty, greedy)
                tp_em, fp_em, fn_em, tpp, tpr, fp, fn, tpc, fpc, fnc, ppc, rpc, fppc, fnpc = res
                for n, q in (("Exact\nMatch", (tp_em, tp_em, fp_em, fn_em)), ("Partial\nOverlap", (tpp, tpr, fp, fn)),
                             ("Character\nProportion", (ppc, rpc, fppc, fnpc))):
                    micro[n].update(*q)
                    macro[n].update(*compute_p_r_f1_from_tp_fp_fn(*q))
            tag = ("greedy" if greedy else "optimal") + ("-match" if penalty else "")
            for n, m in names.items():
                out[f"{tag}/{m}/micro"] = list(micro[n].get_precision_recall_f1())
                out[f"{tag}/{m}/macro-mean-f1"] = list(macro[n].get_precision_recall_f1(True))
                out[f"{tag}/{m}/macro-f1-of-means"] = list(macro[n].get_precision_recall_f1(False))
        out["cells"] = len(both)
        result["pairs"][f"{a}>{b}"] = out
    json.dump(result, sys.stdout, indent=0)


main(sys.argv[1])
