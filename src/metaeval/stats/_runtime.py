"""Process-level runtime control for the numerical kernels: OpenBLAS threads and allocator headroom.

Private to metaeval: the stats kernels and the parallel runtime (:mod:`metaeval.runtime`) use it; it never
writes environment variables.
"""
from __future__ import annotations

import ctypes
import threading
from contextlib import contextmanager

import numpy as np

_BLAS_SYMBOLS = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
                 ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
                 ("openblas_set_num_threads", "openblas_get_num_threads"))
_blas_state = {"controls": None, "depth": 0, "previous": []}
_blas_lock = threading.Lock()


def _openblas_controls():
    """(setter, getter) of the thread count of every loaded OpenBLAS (empty if none is found)."""
    if _blas_state["controls"] is None:
        controls = []
        try:
            with open("/proc/self/maps", encoding="utf-8") as handle:
                paths = sorted({line.split()[-1] for line in handle if "openblas" in line.split()[-1].lower()})
        except OSError:
            paths = []
        for path in paths:
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for setter, getter in _BLAS_SYMBOLS:
                if hasattr(lib, setter) and hasattr(lib, getter):
                    controls.append((getattr(lib, setter), getattr(lib, getter)))
                    break
        _blas_state["controls"] = controls
    return _blas_state["controls"]


_ALLOCATOR_HEADROOM = {"done": False, "bytes": 16 << 20}


def allocator_headroom() -> None:
    """Let the C allocator keep the kernels' freed temporaries for reuse (best effort, once per process).

    glibc maps blocks above a threshold (128 KiB, raised to the largest mapped block freed so far, at
    most 32 MiB) directly from the system and returns freed heap memory beyond twice that threshold, so
    in a fresh process the multi-megabyte draws and temporaries of every call are first-touched again:
    a page fault per 4 KiB, measured at about 1 ms per bootstrap call. Allocating and freeing one
    untouched 16 MiB block, as any larger numpy array would, raises the thresholds to 16 and 32 MiB.
    Nothing is written, so no memory is used; with other allocators it does nothing.
    """
    if not _ALLOCATOR_HEADROOM["done"]:
        _ALLOCATOR_HEADROOM["done"] = True
        if _ALLOCATOR_HEADROOM["bytes"]:
            np.empty(_ALLOCATOR_HEADROOM["bytes"], dtype=np.uint8)


def limit_blas_threads(n: int = 1) -> None:
    """Set every loaded OpenBLAS to ``n`` threads for the rest of the process (worker processes)."""
    for setter, _ in _openblas_controls():
        setter(int(n))


@contextmanager
def single_blas_thread():
    """Run the body with OpenBLAS limited to one thread (best effort; no-op without OpenBLAS).

    The kernels' matrix products are small; with one BLAS thread per core their worker threads spin and
    wait for cores on a loaded machine: a (1000 x 300) @ (300 x 200) float32
    product measured 8-20 ms with 2 threads and 1.2 ms with one on the 2-core development machine. The
    previous setting is restored when the outermost such block exits (nested and concurrent blocks are
    counted). The products are exact, so the thread count never changes a result.
    """
    allocator_headroom()
    with _blas_lock:
        if _blas_state["depth"] == 0:
            controls = _openblas_controls()
            _blas_state["previous"] = [int(getter()) for _, getter in controls]
            for setter, _ in controls:
                setter(1)
        _blas_state["depth"] += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_state["depth"] -= 1
            if _blas_state["depth"] == 0:
                for (setter, _), n in zip(_openblas_controls(), _blas_state["previous"]):
                    setter(n)
