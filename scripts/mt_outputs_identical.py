"""`metaeval mt` and `metaeval mt audit` JSON of two source trees, compared byte for byte (issue 38: the MT wing's
move into `metaeval/mt/` must not change a result).

Run: ``PYTHONPATH=src python scripts/mt_outputs_identical.py --baseline-src /tmp/base/src [--src src]``
(the baseline tree e.g. from ``git archive ca7ca60 src | tar -x -C /tmp/base``).

The data: the WMT24 and WMT25 benchmark workloads of ``benchmarks/bench_mt_protocols.py`` (seeded; WMT25 cut to
its first three language pairs and 200 permutations so that the check takes minutes, not ten), the WMT23 MQM
ratings of ``../shared/data`` with synthetic metrics (rater waves, a human baseline), and the packaged WMT19
DA system scores for ``mt audit``. Each command runs in a fresh process under both trees; the outputs must be equal
byte for byte, except the signature fields named by ``--ignore-field`` (fields a later change adds: they are
removed from both signatures before the comparison). Exit code 0 when every output is equal, 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "benchmarks"))
RATINGS = HERE.parent.parent / "shared" / "data" / "wmt" / "mqm_ratings"
FIELD = r"[a-z_]+"


def write_data(directory: str) -> dict[str, list[str]]:
    """The score files; returns the `--scores` arguments of each workload."""
    import numpy as np

    import metaeval as me
    from bench_mt_protocols import write_workload

    out = {"wmt24": write_workload("wmt24", directory)}
    sub = os.path.join(directory, "wmt25")
    os.makedirs(sub)
    out["wmt25"] = write_workload("wmt25", sub, lps=3)
    rng = np.random.default_rng(0)
    ratings = []
    for lp, short in (("en-de", "ende"), ("zh-en", "zhen")):
        path = RATINGS / f"sxs_mqm_generalMT2023_{short}.3ratings.tsv.gz"
        ds = me.read_mqm_ratings(path).scores
        mqm = ds.matrix("mqm")
        mats = {"metric-A": mqm + rng.normal(scale=1.0, size=mqm.shape),
                "metric-B": mqm + rng.normal(scale=4.0, size=mqm.shape), "metric-C": rng.normal(size=mqm.shape)}
        metrics = os.path.join(directory, f"metrics_{short}.csv")
        me.write_scores(me.ScoreSet(mats, systems=ds.systems, inputs=ds.inputs, name=short), metrics)
        ratings += ["--scores", f"{lp}={path}", "--scores", f"{lp}={metrics}"]
    out["ratings"] = ratings
    return out


def commands(data: dict[str, list[str]]) -> dict[str, list[str]]:
    """name -> the arguments after `metaeval`."""
    return {
        "wmt24": ["mt", *data["wmt24"], "--protocol", "wmt24", "--seed", "3", "--format", "json"],
        "wmt25": ["mt", *data["wmt25"], "--protocol", "wmt25", "--human", "human", "--n-resamples", "200", "--seed", "5",
                  "--format", "json"],
        "wmt24-mean-tasks": ["mt", *data["wmt24"], "--protocol", "mean", "--task", "system/accuracy",
                             "--task", "summary/acc23", "--task", "global/pearson", "--task", "by-system/kendall-b",
                             "--n-resamples", "100", "--seed", "1", "--format", "json"],
        "ratings-waves-baseline": ["mt", *data["ratings"], "--rater-waves", "2", "--human", "mqm.wave1",
                                   "--human-baseline", "mqm.wave2", "--exclude-system", "refA",
                                   "--task", "system/soft-accuracy", "--task", "summary/acc23",
                                   "--task", "global/pearson", "--protocol", "mean", "--n-resamples", "200",
                                   "--seed", "0", "--format", "json"],
        "audit-wmt19": ["mt", "audit", "--dataset", "de-en=wmt19-da-sys", "--dataset", "zh-en=wmt19-da-sys",
                        "--metric", "sacrebleu-bleu", "--metric", "sacrebleu-chrf", "--metric", "ter",
                        "--task", "system/accuracy", "--task", "system/pearson", "--consistency", "0",
                        "--n-resamples", "100", "--accuracy-target", "0.9", "--seed", "2", "--format", "json"],
        "audit-wmt24": ["mt", "audit", *data["wmt24"], "--human", "human", "--task", "system/soft-accuracy",
                        "--task", "summary/pearson", "--n-resamples", "100", "--consistency", "10", "--seed", "4",
                        "--format", "json"],
    }


def run(src: str, args: list[str], cwd: str) -> tuple[int, bytes]:
    env = dict(os.environ, PYTHONPATH=src, COLUMNS="200")
    out = subprocess.run([sys.executable, "-m", "metaeval.cli.main", *args], env=env, cwd=cwd, capture_output=True)
    return out.returncode, out.stdout + (b"\n--stderr--\n" + out.stderr if out.returncode else b"")


def without_fields(text: bytes, fields: list[str]) -> bytes:
    """The output with the signature fields ``fields`` (``name:value`` between ``|``) removed."""
    out = text.decode("utf-8")
    for name in fields:
        out = re.sub(r"\|" + re.escape(name) + r":[^|\"]*", "", out)
        out = re.sub(r"\"" + re.escape(name) + r"\": (\"[^\"]*\"|[^,}\n]*),? ?", "", out)
    return out.encode("utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-src", required=True)
    parser.add_argument("--src", default=str(HERE.parent / "src"))
    parser.add_argument("--ignore-field", action="append", default=[],
                        help="A signature field added after the baseline (repeatable).")
    parser.add_argument("--only", action="append", default=[], help="Run only this comparison (repeatable).")
    parser.add_argument("--keep", help="Write both outputs of each comparison into this directory.")
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as directory:
        cmds = commands(write_data(directory))
        for name, cmd in cmds.items():
            if args.only and name not in args.only:
                continue
            results = [run(os.path.abspath(src), cmd, directory) for src in (args.baseline_src, args.src)]
            (rc_a, a), (rc_b, b) = results
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                for tag, text in (("baseline", a), ("this", b)):
                    Path(args.keep, f"{name}.{tag}.json").write_bytes(text)
            same = rc_a == rc_b == 0 and without_fields(a, args.ignore_field) == without_fields(b, args.ignore_field)
            failed += not same
            json_ok = rc_b == 0 and isinstance(json.loads(b), dict)
            print(f"{name}: {'identical' if same else 'DIFFERENT'} ({len(a)} / {len(b)} bytes, exit {rc_a} / {rc_b},"
                  f" json {'ok' if json_ok else 'bad'})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
