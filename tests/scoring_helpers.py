"""Scorers and corpora for the scoring-engine tests; importable by worker processes and subprocesses."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from metaeval.metrics import Rouge
from metaeval.signature import Signature


class CountingRouge:
    """ROUGE that appends one line to ``log`` per call (counts calls across processes), optionally slow."""

    name = "counting-rouge"

    def __init__(self, log, *, delay: float = 0.0, stem: bool = False):
        self.log = str(log)
        self.delay = delay
        self.rouge = Rouge(stem=stem)

    @property
    def signature(self) -> Signature:
        # The log file and the delay change no score: they are not part of the signature.
        return Signature.of(metric="counting-rouge", flags=self.rouge.flags)

    def score(self, candidate, references):
        with open(self.log, "a", encoding="utf-8") as stream:
            stream.write("call\n")
        if self.delay:
            time.sleep(self.delay)
        return self.rouge.score(candidate, references)


def calls(log) -> int:
    path = Path(log)
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def summeval_corpus(shared_data: Path, n: int) -> tuple[list[dict], dict[str, list[str]]]:
    """The first ``n`` SummEval summaries as candidate records, and the 11 references of their inputs."""
    candidates, references = [], {}
    with open(shared_data / "summeval" / "texts.jsonl", encoding="utf-8") as stream:
        for line in stream:
            row = json.loads(line)
            candidates.append({"system": row["system_id"], "input": row["doc_id"], "candidate": row["summary"]})
            references[row["doc_id"]] = row["references"]
            if len(candidates) == n:
                break
    return candidates, references


def write_jsonl(path: Path, records) -> Path:
    with open(path, "w", encoding="utf-8") as stream:
        for record in records:
            stream.write(json.dumps(record) + "\n")
    return path


def run_until_killed(candidates: str, references: str, cache: str, log: str, delay: float) -> None:
    """Subprocess target: score slowly with a cache (the test kills this process mid-way)."""
    import metaeval as me

    me.score(candidates, references, metrics=[CountingRouge(log, delay=delay)], cache=cache, batch_size=4,
             progress=False)


if __name__ == "__main__":
    run_until_killed(*sys.argv[1:5], float(sys.argv[5]))
