"""Connecting to a Dask cluster (the optional extra ``dask``): one validation, one connection, one error."""
from __future__ import annotations

from typing import Any

from .. import defaults
from ..errors import ParameterError, require_module

__all__ = ["check_scheduler", "connect", "distributed"]

DASK_INSTALL = "'metaeval[dask]'"


def distributed():
    """The ``distributed`` module, or :class:`~metaeval.errors.MissingDependencyError` with the install hint."""
    return require_module("distributed", purpose="running on a Dask scheduler", install=DASK_INSTALL)


def _is_client(value: Any) -> bool:
    try:
        import distributed as module
    except ImportError:
        return False
    return isinstance(value, module.Client)


def check_scheduler(scheduler: Any) -> Any:
    """``scheduler`` if it is None, a non-empty address or a ``distributed.Client``."""
    if scheduler is None or _is_client(scheduler):
        return scheduler
    if isinstance(scheduler, str) and scheduler.strip():
        return scheduler
    if isinstance(scheduler, str):
        raise ParameterError(f"`scheduler` must be a scheduler address like 'tcp://host:8786'; got {scheduler!r}.")
    raise ParameterError("`scheduler` must be a dask.distributed Client or a scheduler address like "
                         f"'tcp://host:8786'; got {scheduler!r}.")


def connect(scheduler: Any) -> tuple[Any, bool]:
    """``(client, owned)``: the given Client (not owned), or a new Client connected to the address (owned:
    the caller closes it)."""
    module = distributed()
    if isinstance(scheduler, module.Client):
        return scheduler, False
    try:
        client = module.Client(scheduler, timeout=defaults.DASK_CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        raise ParameterError(
            f"`scheduler` must be the address of a running Dask scheduler; could not connect to {scheduler!r}"
            f" within {defaults.DASK_CONNECT_TIMEOUT:g} s ({type(error).__name__})."
        ) from None
    return client, True
