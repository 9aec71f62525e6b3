"""Where the worker-process machinery used to live: it is :mod:`hermes_pipeline.export.worker` now.

Kept only so that the OpenTelemetry sink's modules, which import it from here, keep working until
that sink moves into its own package; new code imports :mod:`hermes_pipeline.export.worker`.
"""

from ..export.worker import (
    WORKERS, ProcessSink, WorkerDied, WorkerPool, WorkerProcess, check_worker, process_sink, shared_worker_name,
    split_worker,
)

__all__ = ["WORKERS", "ProcessSink", "WorkerDied", "WorkerPool", "WorkerProcess", "check_worker",
           "process_sink", "shared_worker_name", "split_worker"]
