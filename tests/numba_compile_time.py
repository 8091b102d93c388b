"""A pytest plugin: numba's compile time, counted apart from the tests' run time (issue 37, item 5).

numba compiles a loop on its first call with a new type signature and writes the machine code to its cache; a
cold run (a fresh clone, an empty ``NUMBA_CACHE_DIR``) pays every compile, a warm one loads them. The terminal
summary says how much of the suite's time was compiling::

    numba compiled N specialisations of F functions in W s wall, C s CPU, summed over 2 workers (cache: ...);
    most compile time (wall, CPU):
        W1 s   C1 s  tests/test_stats_shared_kernels.py::test_tied_sweep_counts_equal_the_ordered_pass_...

The count comes from numba's own event ``"numba:compile"`` (:mod:`numba.core.event`), which numba fires around a
real compile only, not around a load from its cache; a compile that triggers another (a loop calling a loop)
counts both specialisations and its time once. The listener is installed when numba is imported (the tests, like
the library, import it on first use only: a post-import hook, so that a run without numba never imports it).
Under pytest-xdist each worker counts its own compiles and sends them to the controller, which adds them up (the
seconds are then summed over the workers). Commands the tests start as subprocesses (the CLI, the docs'
examples) compile in those processes and are not counted.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
import time

import pytest

__all__ = ["CompileTimes", "RECORD", "install"]


class _Record:
    """Every compile of this process: ``(function, signature, wall seconds, CPU seconds, test)``, the seconds
    ``None`` for a compile nested in another (counted in the outer one's). The CPU seconds are the compiling
    thread's (numba compiles in the calling thread, holding its compiler lock): unlike the wall seconds, they do
    not grow when other processes share the cores."""

    def __init__(self) -> None:
        self.compiles: list[tuple[str, str, float | None, float | None, str]] = []
        self.test = ""  # the test running now (set by the plugin)
        self._depth = 0
        self._start = (0.0, 0.0)

    def on_start(self, event) -> None:
        if self._depth == 0:
            self._start = (time.perf_counter(), time.thread_time())
        self._depth += 1

    def on_end(self, event) -> None:
        self._depth -= 1
        wall = cpu = None
        if self._depth == 0:
            wall, cpu = time.perf_counter() - self._start[0], time.thread_time() - self._start[1]
        dispatcher = event.data["dispatcher"]
        function = getattr(dispatcher, "py_func", dispatcher)
        name = f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', repr(function))}"
        self.compiles.append((name, str(event.data.get("args")), wall, cpu, self.test))


RECORD = _Record()


def _listen() -> None:
    from numba.core import event

    _lock_cache_saves()

    class Listener(event.Listener):
        def on_start(self, evt):
            RECORD.on_start(evt)

        def on_end(self, evt):
            RECORD.on_end(evt)

    event.register("numba:compile", Listener())


def _lock_cache_saves() -> None:
    """numba's cache saves one process at a time (the xdist workers and the commands they start share one cache):
    the library's own lock (:mod:`metaeval.stats.kernels.compiler.cache_lock`), taken here as soon as numba is
    imported, before any test compiles through numba directly."""
    from metaeval.stats.kernels.compiler.cache_lock import lock_cache_saves

    lock_cache_saves()


class _AfterNumba(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when ``numba`` is imported, wraps its loader so that the listener is installed
    right after numba's own code has run (a bare ``importlib.util.find_spec("numba")``, which the library
    uses to ask whether numba is there without importing it, gets the same spec and installs nothing)."""

    def __init__(self) -> None:
        self._finding = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "numba" or self._finding:
            return None
        self._finding = True
        try:
            spec = importlib.util.find_spec("numba")
        finally:
            self._finding = False
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module
        finder = self

        def exec_module(module):
            run(module)
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
                _listen()

        spec.loader.exec_module = exec_module
        return spec


def install() -> None:
    """Listen to numba's compiles from now on (now if numba is imported, else when it is)."""
    if "numba" in sys.modules:
        _listen()
    elif not any(isinstance(finder, _AfterNumba) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterNumba())


class CompileTimes:
    """The plugin: names the running test in :data:`RECORD`, gathers the xdist workers' records and prints
    the summary line."""

    def __init__(self, config) -> None:
        self.config = config
        self.from_workers: list[list] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        RECORD.test = item.nodeid
        yield
        RECORD.test = ""

    def pytest_sessionfinish(self, session):
        output = getattr(session.config, "workeroutput", None)  # set on an xdist worker only
        if output is not None:
            output["numba_compiles"] = json.dumps(RECORD.compiles)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        data = getattr(node, "workeroutput", {}).get("numba_compiles")
        if data:
            self.from_workers.append(json.loads(data))

    def pytest_terminal_summary(self, terminalreporter):
        compiles = list(RECORD.compiles) + [tuple(c) for worker in self.from_workers for c in worker]
        for line in summary(compiles, workers=len(self.from_workers)):
            terminalreporter.write_line(line)
        path = self.config.getoption("numba_compiles", None)
        if path:
            write_compiles(path, compiles)
            terminalreporter.write_line(f"numba's compiles written to {path}")


def write_compiles(path, compiles: list) -> None:
    """``--numba-compiles PATH``: every compile of the run as JSON, one object per specialisation (which loops
    and signatures the suite compiles, and which test compiled each first)."""
    keys = ("function", "signature", "wall_seconds", "cpu_seconds", "test")
    with open(path, "w", encoding="utf-8") as stream:
        json.dump([dict(zip(keys, c)) for c in compiles], stream, indent=1)
        stream.write("\n")


def summary(compiles: list, *, workers: int = 0, top: int = 5) -> list[str]:
    """The summary's lines: the totals, then the ``top`` tests that spent the most time compiling."""
    wall = sum(c[2] for c in compiles if c[2] is not None)
    cpu = sum(c[3] for c in compiles if c[3] is not None)
    functions = len({c[0] for c in compiles})
    where = os.environ.get("NUMBA_CACHE_DIR") or "numba's default"
    summed = f", summed over {workers} workers" if workers > 1 else ""
    if not compiles:
        return [f"numba compiled no function in the test processes (cache: {where})"]
    lines = [f"numba compiled {len(compiles)} specialisations of {functions} functions in {wall:.1f} s wall,"
             f" {cpu:.1f} s CPU{summed} (cache: {where}; not counted: the subprocesses the tests start); most"
             f" compile time (wall, CPU):"]
    by_test: dict[str, list[float]] = {}
    for _, _, w, c, test in compiles:
        if w is not None:
            spent = by_test.setdefault(test or "(outside a test)", [0.0, 0.0])
            spent[0] += w
            spent[1] += c
    for test, (w, c) in sorted(by_test.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"  {w:6.1f} s {c:6.1f} s  {test}")
    return lines
