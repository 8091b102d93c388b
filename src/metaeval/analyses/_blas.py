"""One BLAS thread while a simulation runs: the stats kernels' context manager, shared.

The simulations evaluate thousands of small matrix products; OpenBLAS threads that spin between them
steal the cores (PITFALLS). :func:`metaeval.stats.kernels.single_blas_thread` limits the loaded OpenBLAS
to one thread and restores it afterwards (a no-op where OpenBLAS is not found); it is re-entrant, so the
simulations and the kernels they call can both use it.
"""
from __future__ import annotations

from ..stats.kernels import single_blas_thread

__all__ = ["single_blas_thread"]
