"""Signal a running `metaeval` command at a point it reports, so that a test cannot race the command's end.

A test that sleeps a fixed time and then signals races the code under test: when the code gets faster, the
signal lands after the end (issue 41, item 7). :func:`signal_after_first_progress` runs the command with
stderr on a pseudo-terminal (so its progress bar is drawn), waits until the bar has counted its first unit
of work, and only then sends the signal: the test's workload must leave many more units after the first, so
that the rest cannot finish first.
"""
from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["signal_after_first_progress", "small_scores"]

SRC = Path(__file__).resolve().parents[1] / "src"
CONTROL = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]")
COUNTED = re.compile(rb"\b([1-9][0-9]*)/([0-9]+)\b")  # the bar's `done/total`, at least one unit done


def small_scores(path: Path, n_metrics: int = 8) -> Path:
    """A score file of 30 systems x 40 inputs, ``n_metrics`` metrics ``m0..`` and the human ``human``."""
    lines = ["system,input," + ",".join(f"m{k}" for k in range(n_metrics)) + ",human"]
    lines += [f"s{i},d{j}," + ",".join(str((i * 7 + j * (3 + k)) % 11 + i) for k in range(n_metrics)) + f",{i + j % 3}"
              for i in range(30) for j in range(40)]
    path.write_text("\n".join(lines) + "\n")
    return path


def signal_after_first_progress(argv: list, signum: int, *, timeout: float = 300.0) -> tuple[int, str, str, str]:
    """Run ``metaeval ARGV``, send ``signum`` once its progress bar shows a first unit of work done; return
    ``(exit code, stdout, the bar's text as drawn, stderr after the bar)``: the last part is what stays on the
    terminal once the transient bar is erased (the text after the last control sequence, ``\\r\\n`` as
    ``\\n``). Fails if the command ends before it reports progress."""
    import pty

    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(SRC), COLUMNS="120", TERM="xterm")
    process = subprocess.Popen([sys.executable, "-m", "metaeval.cli.main", *map(str, argv)], stdout=subprocess.PIPE,
                               stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    drawn = b""
    deadline = time.monotonic() + timeout
    try:
        while not COUNTED.search(CONTROL.sub(b"", drawn)):
            if process.poll() is not None or time.monotonic() > deadline:
                out = process.communicate()[0]
                raise AssertionError(f"the command ended (or timed out) before reporting progress: "
                                     f"exit {process.returncode}, stdout {out!r}, stderr {drawn[-2000:]!r}")
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                drawn += _read(master)
        process.send_signal(signum)
        rest = b""
        while True:  # until the command closes its end of the terminal
            ready, _, _ = select.select([master], [], [], 1.0)
            chunk = _read(master) if ready else b""
            if ready and not chunk:
                break
            rest += chunk
            if not ready and process.poll() is not None:
                break
        out = process.communicate(timeout=60)[0]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    tail = CONTROL.split(drawn + rest)[-1].replace(b"\r\n", b"\n")
    return process.returncode, out.decode(), CONTROL.sub(b"", drawn).decode(errors="replace"), tail.decode()


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the command closed the terminal (Linux)
        return b""
