"""One runtime for parallel and durable work, shared by scoring and the analyses.

- :mod:`.workers`: local process pools (fork server or ``spawn``, never a fork of a threaded caller)
  whose workers run with one BLAS / OpenMP thread;
- :mod:`.dask`: connecting to a Dask scheduler (optional extra ``dask``);
- :mod:`.tasks`: :func:`map_tasks`, independent seeded tasks on any backend with the same results;
- :mod:`.files`: atomic file writes (never a half-written output file).

Nothing here writes the calling process's environment: thread limits are set inside the worker
processes metaeval starts (:func:`.workers.limit_worker_threads`).
"""
