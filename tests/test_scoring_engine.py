"""The scoring engine (me.score): validation, cache reuse, resuming after SIGKILL, identical backends."""
from __future__ import annotations

import os

import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import metaeval as me
from metaeval import defaults
from metaeval.errors import DegenerateWarning, ParameterError
from metaeval.metrics import Rouge, get_scorer
from metaeval.scoring.engine import _auto_batch_size

from scoring_helpers import CountingRouge, calls, summeval_corpus, write_jsonl

HELPERS = Path(__file__).with_name("scoring_helpers.py")
TINY_C = {"s1": {"d1": "the cat sat on the mat", "d2": "a dog"}, "s2": {"d1": "the cat"}}
TINY_R = {"d1": ["a cat sat on a mat"], "d2": ["the dog barked"]}


def same_scores(a, b) -> bool:
    return (a.systems, a.inputs, a.scorers) == (b.systems, b.inputs, b.scorers) and all(
        np.array_equal(a.matrix(s), b.matrix(s), equal_nan=True) for s in a.scorers)


# -- validation: every message pinned -------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    (dict(metrics=[]), "`metrics` must name at least one metric; got none."),
    (dict(metrics=["nope"]), "`metric` must be one of 'rouge', "),
    (dict(metrics=[3]), "`metrics` must hold metric names (see metaeval.metrics.METRICS) or scorers (objects with a"
                        " `signature` and a `score(candidate, references)` method); got 3."),
    (dict(metrics=["rouge", Rouge(stem=True)]), None),
    (dict(metrics={"a": "rouge", "b": "rouge"}), "`metrics` must hold distinct metrics; got the signature"
                                                 " 'metric:rouge-1.5.5|flags:-n 2 -f A -p 0.5 -t 0|rounding:none|scale:0-1|version:"),
    (dict(metrics="rouge", workers=0), "`workers` must be an integer >= 1; got 0."),
    (dict(metrics="rouge", workers=2, scheduler="tcp://x:1"),
     "`workers` must be 1 when `scheduler` is given (the cluster sets the parallelism); got 2."),
    (dict(metrics="rouge", scheduler=42), "`scheduler` must be a dask.distributed Client or a scheduler address like"
                                          " 'tcp://host:8786'; got 42."),
    (dict(metrics="rouge", cache=3), "`cache` must be None or the path of a cache file; got 3."),
    (dict(metrics="rouge", progress="yes"), "`progress` must be True, False or a progress callable; got 'yes'."),
    (dict(metrics="rouge", batch_size=0), "`batch_size` must be an integer >= 1; got 0."),
])
def test_parameter_errors(kwargs, message):
    if message is None:  # two settings of one metric in a list: same name, ask for a mapping
        message = ("`metrics` must name each metric once; got 'rouge' twice (to score with two settings of one"
                   " metric, pass a mapping {label: scorer}).")
    kwargs.setdefault("progress", False)
    with pytest.raises(ParameterError, match="^" + re.escape(message)):
        me.score(TINY_C, TINY_R, **kwargs)


def test_colliding_score_names_and_unreachable_scheduler(monkeypatch):
    class Other:
        name = "other"
        signature = me.Signature.of(metric="other")

        def score(self, candidate, references):
            return {"rouge-1": {"recall": 1.0}}

    with pytest.raises(ParameterError) as caught:
        me.score(TINY_C, TINY_R, metrics=["rouge", Other()], progress=False)
    assert str(caught.value) == ("`metrics` must give every score a distinct name; got 'rouge-1.recall' from both"
                                 " 'rouge' and 'other' (pass a mapping {label: metric} to prefix each metric's scores).")
    prefixed = me.score(TINY_C, TINY_R, metrics={"r": "rouge", "o": Other()}, progress=False)
    assert prefixed.scorers[0] == "r.rouge-1.recall" and prefixed.scorers[-1] == "o.rouge-1.recall"
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "distributed", None)  # as if dask were not installed
        with pytest.raises(me.MissingDependencyError) as caught:
            me.score(TINY_C, TINY_R, metrics="rouge", scheduler="tcp://127.0.0.1:9", progress=False)
    assert str(caught.value) == ("running on a Dask scheduler needs the Python package 'distributed'; install it with"
                                 " `pip install 'metaeval[dask]'`.")
    monkeypatch.setattr(defaults, "DASK_CONNECT_TIMEOUT", 0.5)
    pytest.importorskip("distributed")
    with pytest.raises(ParameterError) as caught:
        me.score(TINY_C, TINY_R, metrics="rouge", scheduler="tcp://127.0.0.1:9", progress=False)
    assert str(caught.value).startswith("`scheduler` must be the address of a running Dask scheduler; could not"
                                        " connect to 'tcp://127.0.0.1:9' within 0.5 s (")


# -- scores ----------------------------------------------------------------------------------------

def test_scores_equal_the_scorer_and_record_signatures():
    rouge = Rouge(stem=True)
    ds = me.score(TINY_C, TINY_R, metrics=[rouge], progress=False, name="tiny")
    assert isinstance(ds, me.ScoreSet) and ds.name == "tiny"
    assert ds.systems == ("s1", "s2") and ds.inputs == ("d1", "d2")
    direct = rouge.score("the cat", ["a cat sat on a mat"])
    assert ds.matrix("rouge-l.f1")[1, 0] == direct["rouge-l"]["f1"]
    assert np.isnan(ds.matrix("rouge-1.recall")[1, 1])  # s2 has no candidate for d2
    assert str(ds.signatures["rouge-2.f1"]) == str(rouge.signature)
    assert dict(ds.metric_signatures) == {"rouge": rouge.signature}
    meta = ds.metadata()
    assert meta["signatures"] == {"rouge": str(rouge.signature)} and meta["run"]["computed"] == 3
    assert ds.run.backend == "serial" and ds.run.cells == ds.run.pairs == 3
    assert repr(ds) == "ScoredSet('tiny', 2 systems x 2 inputs, 9 scorers from 1 metric, backend='serial')"
    assert type(ds.subset(systems=["s1"])) is me.ScoreSet  # derived sets drop the run record


def test_rerun_recomputes_nothing_and_shared_pairs_are_scored_once(tmp_path):
    log = tmp_path / "calls.log"
    cache = tmp_path / "cache.sqlite"
    same_text = {"s1": {"d1": "the cat", "d2": "a dog"}, "s2": {"d1": "the cat", "d2": "a dog"}}
    first = me.score(same_text, TINY_R, metrics=[CountingRouge(log)], cache=cache, progress=False)
    assert calls(log) == first.run.computed == 2 and first.run.cells == 4  # two systems, same texts
    again = me.score(same_text, TINY_R, metrics=[CountingRouge(log)], cache=cache, progress=False)
    assert calls(log) == 2 and again.run.computed == 0 and again.run.cached == 2
    assert same_scores(first, again)
    more = {"s1": {"d1": "the cat", "d2": "a dog"}, "s3": {"d1": "the mat"}}
    third = me.score(more, TINY_R, metrics={"counted": CountingRouge(log), "plain": "rouge"}, cache=cache,
                     progress=False)
    assert calls(log) == 3 and [(m.computed, m.cached) for m in third.run.metrics] == [(1, 2), (3, 0)]


def test_auto_batch_size():
    assert _auto_batch_size(10, 1) == 3 and _auto_batch_size(10_000, 2) == defaults.SCORING_BATCH_SIZE
    assert _auto_batch_size(1, 4) == 1 and _auto_batch_size(0, 4) == defaults.SCORING_BATCH_SIZE


def test_identical_scores_on_every_backend(shared_data):
    """Serial, a 2-process pool and a Dask LocalCluster give bitwise equal scores (and the same warnings)."""
    distributed = pytest.importorskip("distributed")
    candidates, references = summeval_corpus(shared_data, 48)
    candidates.append({"system": "empty", "input": candidates[0]["input"], "candidate": ". . ."})
    metrics = [get_scorer("rouge", stem=True, weight=1.2, skip_distance=4, skip_unigrams=True)]
    runs = {}
    with pytest.warns(DegenerateWarning, match="must contain tokens"):
        runs["serial"] = me.score(candidates, references, metrics=metrics, progress=False)
    environment = dict(os.environ)
    with pytest.warns(DegenerateWarning, match="must contain tokens"):
        runs["pool"] = me.score(candidates, references, metrics=metrics, workers=2, batch_size=7, progress=False)
    assert dict(os.environ) == environment  # thread limits are set inside the workers only
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        with pytest.warns(DegenerateWarning, match="must contain tokens"):
            runs["dask"] = me.score(candidates, references, metrics=metrics, scheduler=client, batch_size=5,
                                    progress=False)
    assert runs["pool"].run.backend == "processes(2)" and runs["dask"].run.backend.startswith("dask(")
    assert runs["dask"].run.parallelism == 2
    for name in ("pool", "dask"):
        assert same_scores(runs[name], runs["serial"]), name
    assert runs["serial"].matrix("rouge-su4.f1")[-1, 0] == 0.0  # ROUGE-1.5.5 reports 0 for a text without tokens


# -- resuming ---------------------------------------------------------------------------------------

def _committed(cache: Path) -> int:
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT count(*) FROM scores").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_sigkill_mid_run_then_resume_gives_the_uninterrupted_scores(tmp_path, shared_data):
    candidates, references = summeval_corpus(shared_data, 100)
    c = write_jsonl(tmp_path / "c.jsonl", candidates)
    r = write_jsonl(tmp_path / "r.jsonl", [{"input": k, "references": v} for k, v in references.items()])
    cache = tmp_path / "cache.sqlite"
    log = tmp_path / "killed.log"
    child = subprocess.Popen([sys.executable, str(HELPERS), str(c), str(r), str(cache), str(log), "0.02"],
                             stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _committed(cache) < 12:
        assert child.poll() is None, child.stderr.read().decode()
        assert time.monotonic() < deadline, "the scoring subprocess never committed a batch"
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    kept = _committed(cache)
    with sqlite3.connect(cache) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    resumed_log = tmp_path / "resumed.log"
    resumed = me.score(c, r, metrics=[CountingRouge(resumed_log)], cache=cache, progress=False)
    total = resumed.run.pairs
    assert 12 <= kept < total, "the kill must land mid-way"
    assert resumed.run.cached == kept and resumed.run.computed == calls(resumed_log) == total - kept
    uninterrupted = me.score(c, r, metrics=[CountingRouge(tmp_path / "fresh.log")], progress=False)
    assert same_scores(resumed, uninterrupted)
    assert _committed(cache) == total
