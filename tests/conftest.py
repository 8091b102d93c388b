"""Shared fixtures: the real data in ../shared/data, and small synthetic score sets."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"SKIPPED: the shared data directory {SHARED_DATA} is absent (clone ../shared beside the repo)")
    return SHARED_DATA


@pytest.fixture
def tiny_scoreset():
    """12 systems x 6 inputs, metric A close to the human score, metric B noisier."""
    import metaeval as me

    rng = np.random.default_rng(1)
    human = rng.normal(size=(12, 6)) + np.arange(12)[:, None] / 3
    a = human + rng.normal(scale=1.5, size=(12, 6))
    b = human + rng.normal(scale=4.0, size=(12, 6))
    return me.ScoreSet.from_matrices(
        {"a": a, "b": b, "human": human},
        systems=[f"s{i}" for i in range(12)],
        inputs=[f"d{j}" for j in range(6)],
        humans=["human"],
        name="tiny",
    )


SUMMEVAL_HUMAN = "expert.relevance"


@pytest.fixture(scope="session")
def summeval_bleu(shared_data, tmp_path_factory):
    """SummEval with a `bleu` column, the texts as files, the corpus statistics and sacrebleu's system BLEU.

    ``(ds, {"bleu": (statistics, aggregate)}, sacrebleu corpus BLEU per system, candidates, references,
    scores CSV)``; the statistics take ~8 s, once per session (test_corpus_level, test_analyses_corpus).
    """
    import json

    import metaeval as me
    from metaeval.scoring.corpus import corpus_statistics

    sacrebleu = pytest.importorskip("sacrebleu")
    base = me.load_dataset("summeval")
    with open(shared_data / "summeval" / "texts.jsonl", encoding="utf-8") as stream:
        rows = [json.loads(line) for line in stream]
    folder = tmp_path_factory.mktemp("summeval-bleu")
    cands = folder / "cands.jsonl"
    refs = folder / "refs.jsonl"
    cands.write_text("".join(json.dumps({"system": r["system_id"], "input": r["doc_id"], "candidate": r["summary"]})
                             + "\n" for r in rows), encoding="utf-8")
    references = {r["doc_id"]: r["references"] for r in rows}
    refs.write_text("".join(json.dumps({"input": d, "references": v}) + "\n" for d, v in references.items()),
                    encoding="utf-8")
    probe = me.ScoreSet.from_matrices({"bleu": np.zeros(base.shape)}, systems=base.systems, inputs=base.inputs)
    statistics, aggregate = corpus_statistics(probe, str(cands), str(refs), "bleu")
    sentence = aggregate(statistics)  # a per-cell score, for the levels that use cells
    mats = {"bleu": sentence, "rouge-2.recall": base.matrix("rouge-2.recall"),
            SUMMEVAL_HUMAN: base.matrix(SUMMEVAL_HUMAN)}
    ds = me.ScoreSet.from_matrices(mats, systems=base.systems, inputs=base.inputs, humans=[SUMMEVAL_HUMAN],
                                   name="summeval")
    by_system = {}
    for r in rows:
        by_system.setdefault(r["system_id"], []).append(r)
    n_refs = len(rows[0]["references"])
    corpus = []
    for system in ds.systems:
        outs = by_system[system]
        streams = [[references[r["doc_id"]][k] for r in outs] for k in range(n_refs)]
        corpus.append(sacrebleu.corpus_bleu([r["summary"] for r in outs], streams).score)
    scores = folder / "scores.csv"
    me.write_scores(ds, scores)
    return ds, {"bleu": (statistics, aggregate)}, np.array(corpus), cands, refs, scores


TERMINAL_VARIABLES = ("COLUMNS", "LINES")


def pytest_addoption(parser):
    parser.addoption("--numba-compiles", metavar="PATH", default=None,
                     help="write every numba compile of the run (function, signature, wall and CPU seconds, test)"
                          " to PATH as JSON (tests/numba_compile_time.py)")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist (``make test``): a worker gets the terminal variables of the run that started it."""
    node.workerinput["terminal_variables"] = {name: os.environ.get(name) for name in TERMINAL_VARIABLES}


def pytest_configure(config):
    """numba's compile time apart in the terminal summary (``tests/numba_compile_time.py``); on an xdist worker,
    the terminal variables as the controller's ``os.environ`` has them. The worker process comes up with
    ``COLUMNS=80`` and ``LINES=24``: GNU readline, imported by pytest, sets them in the controller's C
    environment (unseen by its ``os.environ``), which the worker inherits; the commands the tests run in the
    worker would then wrap their text at 80 columns instead of 100 as in a run without workers."""
    import numba_compile_time

    for name, value in getattr(config, "workerinput", {}).get("terminal_variables", {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    numba_compile_time.install()
    config.pluginmanager.register(numba_compile_time.CompileTimes(config), "numba-compile-time")
