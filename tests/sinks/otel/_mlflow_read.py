"""Read an MLflow experiment's traces back through MLflow's own client and print them as JSON (test helper).

Runs in MLflow's environment (``HERMES_PIPELINE_MLFLOW_PYTHON``: its pins conflict with hermes-agent's), never
imported by the tests: ``python tests/sinks/otel/_mlflow_read.py TRACKING_URI EXPERIMENT_ID`` prints
``{"sessions": [{"id", "traces": [trace ids]}], "traces": [...]}`` where each trace holds what MLflow's UI shows:
its info (session metadata, request / response previews, token usage, state) and its spans (name, span type,
parent, status, inputs, outputs, attributes, events), with MLflow's own translation of the OTLP attributes applied.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _span(span: Any) -> dict[str, Any]:
    return {"span_id": span.span_id, "parent_id": span.parent_id, "name": span.name, "type": span.span_type,
            "status": span.status.status_code.value if hasattr(span.status.status_code, "value")
            else str(span.status.status_code), "description": span.status.description,
            "inputs": span.inputs, "outputs": span.outputs, "attributes": dict(span.attributes),
            "events": [{"name": e.name, "attributes": dict(e.attributes or {})} for e in span.events],
            "start_ns": span.start_time_ns}


def main() -> None:
    import mlflow
    from mlflow import MlflowClient

    uri, experiment = sys.argv[1], sys.argv[2]
    mlflow.set_tracking_uri(uri)
    traces = MlflowClient().search_traces(locations=[experiment], max_results=100)
    sessions = mlflow.search_sessions(locations=[experiment], include_spans=False)
    out = {"sessions": [{"id": s.id, "traces": sorted(t.info.trace_id for t in s)} for s in sessions], "traces": []}
    for trace in traces:
        info = trace.info
        out["traces"].append({
            "trace_id": info.trace_id, "state": str(getattr(info.state, "value", info.state)),
            "metadata": dict(info.trace_metadata), "request_preview": info.request_preview,
            "response_preview": info.response_preview, "token_usage": info.token_usage,
            "spans": sorted((_span(s) for s in trace.data.spans), key=lambda s: s["start_ns"])})
    json.dump(out, sys.stdout, default=str)


if __name__ == "__main__":
    main()
