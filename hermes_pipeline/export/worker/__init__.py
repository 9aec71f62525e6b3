"""Exporters in worker processes: a sink's rendering, encoding and I/O off the agent's interpreter lock.

- :mod:`.protocol`: the ``worker`` key and the frames exchanged;
- :mod:`.parent`: :class:`WorkerProcess`, the child process seen from the agent's process (the
  listener that forwards events, requests, losses);
- :mod:`.sections`: :class:`ProcessSink` (one section's view) and :class:`WorkerPool` (shared workers);
- :mod:`.child`: the child's own side (``python -m hermes_pipeline.export.worker.child``).
"""

from .parent import WorkerProcess
from .protocol import WORKERS, WorkerDied, check_worker, shared_worker_name, split_worker
from .sections import ProcessSink, WorkerPool, entry_reference, process_sink

__all__ = ["WORKERS", "ProcessSink", "WorkerDied", "WorkerPool", "WorkerProcess", "check_worker", "entry_reference",
           "process_sink", "shared_worker_name", "split_worker"]
