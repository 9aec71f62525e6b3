"""The loopback OTLP metrics receiver's decoding of ``ExportMetricsServiceRequest`` bodies."""

from __future__ import annotations

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from hermes_pipeline.demo.otlp_metrics_receiver import decode


def test_a_metric_without_data_gives_no_point_and_the_others_are_decoded() -> None:
    """A metric that has only a name and a unit (its ``data`` oneof unset, which OTLP allows) yields no point,
    instead of failing the whole request; the request's other metrics are decoded as usual."""
    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    scope.metrics.add(name="hermes.empty", unit="1")
    gauge = scope.metrics.add(name="hermes.gauge", unit="s")
    gauge.gauge.data_points.add(as_double=2.5)
    points = decode(request.SerializeToString())
    assert [(p.name, p.unit, p.kind, p.value, p.count) for p in points] == [("hermes.gauge", "s", "gauge", 2.5, 1)]


def test_summaries_and_exponential_histograms_give_their_sum_and_count() -> None:
    """Points of the two kinds with neither a single value nor explicit bounds (a summary, an exponential
    histogram) are decoded as their sum and count, beside a gauge, instead of failing the request."""
    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    scope.metrics.add(name="hermes.summary", unit="ms").summary.data_points.add(sum=12.5, count=3)
    scope.metrics.add(name="hermes.expo", unit="s").exponential_histogram.data_points.add(sum=4.0, count=2)
    scope.metrics.add(name="hermes.gauge", unit="1").gauge.data_points.add(as_int=7)
    points = decode(request.SerializeToString())
    assert [(p.name, p.kind, p.value, p.count) for p in points] == [
        ("hermes.summary", "summary", 12.5, 3), ("hermes.expo", "exponential_histogram", 4.0, 2),
        ("hermes.gauge", "gauge", 7.0, 1)]
