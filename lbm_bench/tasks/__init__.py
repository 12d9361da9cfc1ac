"""The task service: where the package's parallel work runs, and how its workers live.

Every parallel call of the package goes through this subpackage; no other module
imports joblib or touches a Dask client (``tests/test_architecture.py`` checks it).
It knows nothing of models or tables: a task is a function and its arguments.

- :mod:`~lbm_bench.tasks.backends`: where the workers run, for a command or a call
  (``worker_backend``: local loky processes or a Dask cluster; ``in_threads``: threads
  of this process), the backend's checks, and the stop of loky's reusable workers.
- :mod:`~lbm_bench.tasks.pool`: running tasks (``run_tasks``, ``iter_tasks``: in
  order or as they come; ``TaskPool``: one pool for a series of task lists;
  ``run_bundles``: items in bundles over the workers, in this process for one).
- :mod:`~lbm_bench.tasks.bundles`: how items are cut into bundles (contiguous, or
  of about equal cost).
- :mod:`~lbm_bench.tasks.shipping`: a large input crosses to the workers once.
- :mod:`~lbm_bench.tasks.heap`: the heap's free pages given back after a task.
- :mod:`~lbm_bench.tasks.threads`: BLAS pinned to one thread (the same bytes anywhere).
- :mod:`~lbm_bench.tasks.carried`: the settings of a call that every task carries to its
  worker (the sparse kernel chosen).
- :mod:`~lbm_bench.tasks.large`: the large-table threshold, from which a table's own
  work spreads over the workers.

Randomness never depends on where a task runs: tasks get their seeds from their
identity (``SeedSequence`` children), never from a worker.
"""

__all__: list[str] = []
