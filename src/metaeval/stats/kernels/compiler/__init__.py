"""The one home of numba: availability, the jit decorator, the compiled tie tolerance and the LLVM intrinsics."""
import importlib.util

__all__ = ["numba_available"]


def numba_available() -> bool:
    """Whether the compiled kernels can be used (numba importable); does not import it."""
    return importlib.util.find_spec("numba") is not None
