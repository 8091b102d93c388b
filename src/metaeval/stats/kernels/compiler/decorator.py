"""numba's decorator for every compiled loop of ``stats/``, and the tie rule's formula compiled once.

Every compiled loop (the kernels' ``*_compiled.py`` modules, each beside its numpy twin,
:mod:`metaeval.stats.mt._compiled`) is decorated with :func:`jit`: ``cache=True`` (the machine code is written to
disk the first time a loop is called with a given signature and loaded by every later process), ``nogil``. This
module imports numba: the modules that use it are imported on first use only (``import metaeval`` never imports
numba; :func:`metaeval.stats.kernels.compiler.numba_available` asks without importing it).

Where the cache lives (numba's own rules, which metaeval does not override):

1. ``$NUMBA_CACHE_DIR`` when the user sets it;
2. otherwise ``__pycache__`` next to the caller's file when that directory is writable (an installation in a
   user's virtualenv: compiled once per installation);
3. otherwise (a read-only site-packages) numba's user-wide cache directory, ``$XDG_CACHE_HOME/numba`` or
   ``~/.cache/numba``, in a subdirectory named after the caller's directory;
4. when no location is writable the loops are compiled without a cache, once per process.

The cache is keyed by the caller's file (modification time and size), the function's signature and the CPU, so a
stale entry is never used; a loop that calls a function of another module (:data:`tolerance`, the intrinsics of
:mod:`metaeval.stats.kernels.compiler.intrinsics`) inlines it, and is recompiled when its own file changes.
"""
from __future__ import annotations

import numba

from metaeval.stats.correlations.ties import tolerance_formula

from .cache_lock import lock_cache_saves

__all__ = ["jit", "tolerance"]

lock_cache_saves()  # before the first compile: several processes may fill one cache at once


def jit(error_model: str = "python", inline: str = "never"):
    """``numba.njit`` with ``cache=True`` (``nogil``); without a writable cache location, ``cache=False``. Never a
    parallel loop (``prange``): a loop that splits its work is serial and its caller deals the parts to
    :func:`metaeval.stats.kernels.parts.run_parts`' threads (docs/dev/ARCHITECTURE.md).

    ``inline="always"`` inlines the function into its compiled callers (numba IR): for a helper called from a
    hot loop, where a call would cost its arguments' unpacking and keep LLVM from optimising across it."""

    def wrap(fn):
        options = dict(nogil=True, error_model=error_model, inline=inline)
        try:
            return numba.njit(cache=True, **options)(fn)
        except RuntimeError:  # numba: "cannot cache function ...: no locator available"
            return numba.njit(cache=False, **options)(fn)

    return wrap


tolerance = jit()(tolerance_formula)
"""The tie rule's tolerance ``max(rtol (hi - lo), noise max(|hi|, |lo|))``
(:func:`metaeval.stats.correlations.ties.tolerance_formula`, the one place it is written), compiled for the loops
that decide ties per resample."""
