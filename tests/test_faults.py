"""Fault tests (issue 22): a run killed, a cache corrupted, two runs into one directory, a full disk.

Each test injects one fault into a real run on the SummEval texts or scores in ../shared/data and checks
what docs/reliability.md promises: no process left behind, no traceback, no silent wrong number, no
partial or mixed output set.
"""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
METAEVAL = [sys.executable, "-m", "metaeval.cli.main"]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _descendants(pid: int) -> set[tuple[int, str]]:
    """(pid, start time) of every process below ``pid``: psutil when installed, /proc otherwise."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        return {(p.pid, str(p.create_time())) for p in psutil.Process(pid).children(recursive=True)}
    parents: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            parents[int(entry.name)] = (int(fields[1]), fields[19])  # ppid, starttime
    found: set[tuple[int, str]] = set()
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        for child, (ppid, start) in parents.items():
            if ppid == current and (child, start) not in found:
                found.add((child, start))
                frontier.append(child)
    return found


def _running(process: tuple[int, str]) -> bool:
    """Whether ``process`` (pid, start time) still runs (a zombie does not)."""
    pid, start = process
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            p = psutil.Process(pid)
            return str(p.create_time()) == start and p.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return False
    return fields[19] == start and fields[0] != "Z"


def _texts(shared_data: Path, folder: Path, copies: int) -> tuple[Path, Path]:
    """The SummEval candidates ``copies`` times over (distinct texts), and their references."""
    rows = [json.loads(line) for line in open(shared_data / "summeval" / "texts.jsonl", encoding="utf-8")]
    cands, refs = folder / "cands.jsonl", folder / "refs.jsonl"
    with open(cands, "w", encoding="utf-8") as stream:
        for k in range(copies):
            for r in rows:
                stream.write(json.dumps({"system": f"{r['system_id']}-{k}", "input": r["doc_id"],
                                         "candidate": f"{r['summary']} copy {k}"}) + "\n")
    with open(refs, "w", encoding="utf-8") as stream:
        for doc, references in {r["doc_id"]: r["references"] for r in rows}.items():
            stream.write(json.dumps({"input": doc, "references": references}) + "\n")
    return cands, refs


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SIGKILL and /proc: Linux")
def test_sigkill_of_score_leaves_no_process(shared_data, tmp_path):
    """Regression (issue 22 item 3): SIGKILL of `score --workers 2` mid-run left its fork server, resource
    tracker and both workers running; they must all be gone within seconds."""
    cands, refs = _texts(shared_data, tmp_path, copies=8)
    cache = tmp_path / "cache.sqlite"
    command = METAEVAL + ["score", "--candidates", str(cands), "--references", str(refs), "--metric", "rouge",
                          "--output", str(tmp_path / "out.csv"), "--workers", "2", "--batch-size", "16",
                          "--cache", str(cache), "--no-progress"]
    run = subprocess.Popen(command, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    children: set[tuple[int, str]] = set()
    try:
        deadline = time.monotonic() + 120
        rows = 0
        while time.monotonic() < deadline and run.poll() is None:  # mid-run: batches are arriving
            if cache.exists():
                try:
                    with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=1) as db:
                        rows = db.execute("SELECT count(*) FROM scores").fetchone()[0]
                except sqlite3.Error:
                    rows = 0
            if rows >= 32:
                break
            time.sleep(0.1)
        assert run.poll() is None and rows >= 32, "the run must be killed while it is scoring"
        children = _descendants(run.pid)
        assert len(children) >= 3  # the resource tracker, the fork server, the workers
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_running(c) for c in children):
            time.sleep(0.1)
        left = [c for c in children if _running(c)]
        assert left == [], f"processes left running after SIGKILL: {left}"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        for process in children:  # leave nothing behind even when the test fails
            if _running(process):
                os.kill(process[0], signal.SIGKILL)


def _cache_rows(cache: Path) -> int:
    if not cache.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT count(*) FROM scores").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_lost_dask_scheduler_is_one_line_and_the_resume_is_exact(shared_data, tmp_path):
    """Regression (issue 22 item 4): a scheduler killed mid-run printed ~80 lines of client logs and a
    traceback. Now: one line, exit 2, saying what the cache kept; the resumed run equals an uninterrupted one."""
    pytest.importorskip("distributed")
    import metaeval as me

    cands, refs = _texts(shared_data, tmp_path, copies=4)
    cache = tmp_path / "cache.sqlite"
    info = tmp_path / "scheduler.json"
    env = _env()
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", "0", "--no-dashboard", "--scheduler-file", str(info)], **quiet)
    worker = run = None
    try:
        deadline = time.monotonic() + 60
        while not (info.exists() and info.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1",
                                   "--nthreads", "1", "--no-dashboard"], **quiet)
        run = subprocess.Popen(METAEVAL + ["score", "--candidates", str(cands), "--references", str(refs),
                                           "--metric", "rouge", "--output", str(tmp_path / "out.csv"),
                                           "--scheduler", address, "--cache", str(cache), "--batch-size", "16",
                                           "--no-progress"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while _cache_rows(cache) < 64 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert run.poll() is None, "the scheduler must be lost while the run is scoring"
        scheduler.kill()
        scheduler.wait()
        _, err = run.communicate(timeout=120)
    finally:
        for process in (run, worker, scheduler):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    kept = _cache_rows(cache)
    total = 4 * 1600 - 4 * 54  # distinct (candidate, references) pairs: SummEval repeats 54 summaries
    lines = err.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"metaeval: error: `scheduler` must stay reachable for the whole run; lost {address} (")
    assert lines[0].endswith(f"{kept} of {total} metric x pair scores are kept in the cache {str(cache)!r}: run the"
                             " same command again to score only the rest (the scores equal those of an"
                             " uninterrupted run).")
    assert 64 <= kept < total
    assert not (tmp_path / "out.csv").exists()
    resumed = me.score(cands, refs, metrics=["rouge"], cache=cache, progress=False)
    assert resumed.run.cached == kept and resumed.run.computed == total - kept
    fresh = me.score(cands, refs, metrics=["rouge"], progress=False)
    for scorer in fresh.scorers:
        assert resumed.matrix(scorer).tobytes() == fresh.matrix(scorer).tobytes()


def test_malformed_scheduler_address_is_one_line_at_once(tmp_path):
    """Regression (issue 22 item 4): `--scheduler not-an-address` printed the clean error, then a Client
    finalizer's traceback 20 s later."""
    pytest.importorskip("distributed")
    (tmp_path / "c.jsonl").write_text('{"system": "s", "input": "d", "candidate": "a cat"}\n')
    (tmp_path / "r.jsonl").write_text('{"input": "d", "references": ["the cat"]}\n')
    argv = METAEVAL + ["score", "--candidates", "c.jsonl", "--references", "r.jsonl", "--metric", "rouge"]
    started = time.monotonic()
    subprocess.run(argv + ["--output", "local.csv"], cwd=tmp_path, env=_env(), capture_output=True, timeout=120)
    local = time.monotonic() - started  # the same command scored here: start-up under the machine's load
    started = time.monotonic()
    done = subprocess.run(argv + ["--output", "o.csv", "--scheduler", "not-an-address"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("metaeval: error: `scheduler` must be a scheduler address like 'tcp://host:8786'; got"
                           " 'not-an-address' (missing port number in address 'not-an-address').\n")
    assert time.monotonic() - started < local + 10  # 20 s more with the finalizer's wait


def _cli(argv, capsys):
    from metaeval.cli.main import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_score_cache_byte_flip_is_caught_and_rescored(shared_data, tmp_path, capsys):
    """Regression (issue 22 item 5): one flipped byte in the cache changed a BLEU 8.48 to 9.48 unnoticed."""
    import metaeval as me

    sys.path.insert(0, str(Path(__file__).parent))
    from scoring_helpers import summeval_corpus, write_jsonl

    candidates, references = summeval_corpus(shared_data, 40)
    c = write_jsonl(tmp_path / "c.jsonl", candidates)
    r = write_jsonl(tmp_path / "r.jsonl", [{"input": k, "references": v} for k, v in references.items()])
    cache = tmp_path / "cache.sqlite"
    argv = ["score", "--candidates", c, "--references", r, "--metric", "bleu", "--cache", cache, "--no-progress"]
    code, _, err = _cli(argv + ["--output", tmp_path / "first.csv"], capsys)
    assert code == 0, err
    with sqlite3.connect(cache) as db:
        stored = [row[0] for row in db.execute("SELECT scores FROM scores")]
    text = next(s for s in stored if sum(t == s for t in stored) == 1 and json.loads(s)["bleu"] >= 1)
    digit = next(i for i, ch in enumerate(text) if ch.isdigit())
    flipped = text[:digit] + str((int(text[digit]) + 1) % 10) + text[digit + 1:]
    data = cache.read_bytes()
    assert data.count(text.encode()) == 1
    cache.write_bytes(data.replace(text.encode(), flipped.encode()))
    code, out, err = _cli(argv + ["--output", tmp_path / "second.csv"], capsys)
    assert code == 0
    assert err == (f"metaeval: warning: score cache {str(cache)!r}: 1 cached row failed the checksum (the file was"
                   " altered or damaged) and was dropped; its pair is scored again.\n")
    assert ": 1 computed, 38 from the cache" in " ".join(out.split())
    first, second = me.read_scores(tmp_path / "first.csv"), me.read_scores(tmp_path / "second.csv")
    assert first.matrix("bleu").tobytes() == second.matrix("bleu").tobytes()


def test_score_cache_damaged_page_is_one_line(shared_data, tmp_path, capsys):
    """Regression (issue 22 item 4): a corrupted page of the cache gave sqlite3's traceback."""
    sys.path.insert(0, str(Path(__file__).parent))
    from scoring_helpers import summeval_corpus, write_jsonl

    candidates, references = summeval_corpus(shared_data, 400)
    c = write_jsonl(tmp_path / "c.jsonl", candidates)
    r = write_jsonl(tmp_path / "r.jsonl", [{"input": k, "references": v} for k, v in references.items()])
    cache = tmp_path / "cache.sqlite"
    argv = ["score", "--candidates", c, "--references", r, "--metric", "rouge", "--cache", cache, "--no-progress",
            "--output", tmp_path / "scores.csv"]
    assert _cli(argv, capsys)[0] == 0
    data = bytearray(cache.read_bytes())
    page = len(data) // 4096 // 2
    data[page * 4096:(page + 1) * 4096] = b"\xff" * 4096
    cache.write_bytes(bytes(data))
    code, out, err = _cli(argv, capsys)
    assert code == 2 and out == ""
    assert err == (f"metaeval: error: {cache}: must be an intact score cache; got a damaged database (database disk"
                   " image is malformed): delete the file to start a new cache (its scores are computed again).\n")


# -- report output sets (issue 22 item 6) ---------------------------------------------------------------

REPORT = ["report", "--dataset", "summeval", "--metric", "rouge-1.recall", "--metric", "rouge-2.recall",
          "--n-resamples", "40", "--n-repetitions", "4", "--analysis", "none"]
LOCK_MESSAGE = ("must be a directory that no other metaeval run is writing; got one locked by another run (pid {pid}):"
                " wait for it to finish or choose another output.")


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def _hidden_leftovers(*folders: Path) -> list[str]:
    return [p.name for folder in folders if folder.exists() for p in folder.iterdir() if p.name.startswith(".")]


def test_a_directory_another_run_writes_is_refused(tmp_path, capsys):
    out = tmp_path / "report"
    holder = subprocess.Popen([sys.executable, "-c", "import sys\nfrom metaeval.runtime.files import directory_lock\n"
                               f"with directory_lock({str(out)!r}):\n    print('locked', flush=True)\n"
                               "    sys.stdin.read()\n"],
                              env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        code, stdout, err = _cli(REPORT + ["--output", out], capsys)
        assert code == 2 and stdout == ""
        assert err == f"metaeval: error: {out}: {LOCK_MESSAGE.format(pid=holder.pid)}\n"
    finally:
        holder.communicate("")
    assert holder.returncode == 0 and not out.exists()  # the holder created it and left it empty: removed
    code, _, err = _cli(REPORT + ["--output", out], capsys)
    assert code == 0, err
    assert sorted(_snapshot(out)) == ["comparison.csv", "correlations.csv", "report.html", "results.json"]


def test_two_report_runs_into_one_directory(tmp_path):
    """Regression (issue 22 item 6): both runs exited 0 and left one run's page with the other's results.json."""
    out = tmp_path / "report"
    slow = ["--metric", "rouge-l.recall", "--metric", "bertscore.recall", "--n-resamples", "2000", "--n-repetitions",
            "20", "--analysis", "stability"]  # holds the directory for seconds, while the second run starts
    first = subprocess.Popen(METAEVAL + REPORT[:-6] + slow + ["--seed", "1", "--output", str(out)], env=_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / ".metaeval.lock").exists() and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.02)
    os.kill(first.pid, signal.SIGSTOP)  # the first run holds the directory while the second one starts, however fast
    try:
        second = subprocess.run(METAEVAL + REPORT + ["--seed", "2", "--output", str(out)], env=_env(),
                                capture_output=True, text=True, timeout=300)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert second.returncode == 2 and second.stdout == ""
    assert second.stderr == f"metaeval: error: {out}: {LOCK_MESSAGE.format(pid=first.pid)}\n"
    results = json.loads((out / "results.json").read_text())
    assert results["settings"]["seed"] == 1 and "--seed 1 " in (out / "report.html").read_text()
    assert _hidden_leftovers(out, tmp_path) == []


_KILLER = """
import os, signal, sys
import metaeval as me
from metaeval.runtime import files

ds = me.load_dataset("summeval")
out = sys.argv[1]
def report(seed):
    return me.build_report(ds, "expert.relevance", ["rouge-1.recall", "rouge-2.recall"], n_resamples=20,
                           repetitions=4, analyses=[], seed=seed)
me.write_report(report(1), out)
print("old", flush=True)
new = report(2)
written = []
real = files._write_fsync
def dying(target, data, mode):
    written.append(target)
    if len(written) == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
    real(target, data, mode)
files._write_fsync = dying
me.write_report(new, out)
"""


@pytest.mark.parametrize("at", [1, 3, 4])
def test_sigkill_while_the_report_is_written_leaves_the_old_set(tmp_path, at):
    """Regression (issue 22 item 6): SIGKILL during the writes left report.html pointing at missing files."""
    out = tmp_path / "report"
    killed = subprocess.run([sys.executable, "-c", _KILLER, str(out), str(at)], env=_env(), capture_output=True,
                            text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL and killed.stdout == "old\n", killed.stderr
    names = ["comparison.csv", "correlations.csv", "report.html", "results.json"]
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == names
    assert json.loads((out / "results.json").read_text())["settings"]["seed"] == 1
    assert "seed=1)" in (out / "report.html").read_text() or "--seed 1" in (out / "report.html").read_text()
    import metaeval as me

    again = me.build_report(me.load_dataset("summeval"), "expert.relevance", ["rouge-1.recall"], n_resamples=20,
                            repetitions=4, analyses=[], seed=3)
    me.write_report(again, out)  # the next run takes the set over and clears what the killed one left
    assert sorted(p.name for p in out.iterdir()) == ["correlations.csv", "report.html", "results.json"]
    assert _hidden_leftovers(out, tmp_path) == []


@pytest.mark.parametrize("existing", [False, True])
def test_full_disk_keeps_the_old_set_and_names_the_file(tmp_path, capsys, monkeypatch, existing):
    """Regression (issue 22 items 6, 7): a full disk left an empty directory and printed
    `metaeval: error: : No space left on device`."""
    import errno as errnos

    from metaeval.runtime import files

    out = tmp_path / "report"
    if existing:
        assert _cli(REPORT + ["--output", out], capsys)[0] == 0
    before = _snapshot(out) if existing else None
    real = files._write_fsync

    def full(target, data, mode):
        if target.name == "correlations.csv":
            raise OSError(errnos.ENOSPC, "No space left on device")
        real(target, data, mode)

    monkeypatch.setattr(files, "_write_fsync", full)
    code, stdout, err = _cli(REPORT + ["--seed", "5", "--output", out], capsys)
    assert code == 2 and stdout == ""
    assert err == f"metaeval: error: {out / 'correlations.csv'}: No space left on device\n"
    if existing:
        assert _snapshot(out) == before
    else:
        assert not out.exists()
    assert _hidden_leftovers(out, tmp_path) == []
