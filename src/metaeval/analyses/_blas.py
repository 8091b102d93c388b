"""One BLAS thread while a simulation runs (best effort).

The simulations evaluate thousands of small matrix products. With OpenBLAS' default of one thread per core,
each product hands its work to threads that then spin while the caller does the rest of the trial; on a
shared 2-core machine a (1000 x 100) @ (100 x 48) product measured 16 ms with 2 threads and 0.8 ms with one
(PITFALLS: "BLAS threads that keep spinning after a call steal cores"). :func:`single_blas_thread` sets the
loaded OpenBLAS libraries to one thread and restores their setting afterwards; where the library or its
symbols cannot be found (another BLAS, another OS) it does nothing. Setting ``OPENBLAS_NUM_THREADS=1`` in
the environment before Python starts has the same effect.
"""
from __future__ import annotations

import ctypes
from contextlib import contextmanager

_SYMBOLS = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
            ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
            ("openblas_set_num_threads", "openblas_get_num_threads"))


def _openblas_controls():
    try:
        with open("/proc/self/maps", encoding="utf-8") as handle:
            paths = {line.split()[-1] for line in handle if "openblas" in line.split()[-1].lower()}
    except OSError:
        return []
    controls = []
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for setter, getter in _SYMBOLS:
            if hasattr(lib, setter) and hasattr(lib, getter):
                controls.append((getattr(lib, setter), getattr(lib, getter)))
                break
    return controls


@contextmanager
def single_blas_thread():
    """Run the body with OpenBLAS limited to one thread (no-op when OpenBLAS is not found)."""
    controls = _openblas_controls()
    previous = []
    for setter, getter in controls:
        previous.append(int(getter()))
        setter(1)
    try:
        yield
    finally:
        for (setter, _), n in zip(controls, previous):
            setter(n)
