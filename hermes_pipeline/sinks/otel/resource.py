"""The resource of a trace endpoint's spans (spec 04 FMT-59; issue #30: the ``telemetry.sdk.*`` attributes)."""

from __future__ import annotations

from typing import Any, Final

from ...contract.versions import PACKAGE_VERSION
from .config import TraceEndpoint
from .record import Resource

SDK_RESOURCE: Final = {"telemetry.sdk.name": "hermes_pipeline", "telemetry.sdk.language": "python",
                       "telemetry.sdk.version": PACKAGE_VERSION}
"""The ``telemetry.sdk.*`` resource attributes of every trace endpoint: the spans are encoded by this package's
own exporter, not the OpenTelemetry SDK, so the SDK is named as the conventions ask of another implementation
(the metrics resource, built by the OpenTelemetry SDK, names that SDK)."""


def resource_for(endpoint: TraceEndpoint) -> Resource:
    """The endpoint's resource (FMT-59): the SDK attributes, then the endpoint's extra attributes (which may
    override them, as with the SDK's ``Resource.create``), then ``service.name`` and the optional namespace and
    version."""
    attrs: dict[str, Any] = {**SDK_RESOURCE, **endpoint.resource_attributes}
    attrs["service.name"] = endpoint.service_name
    if endpoint.service_namespace:
        attrs["service.namespace"] = endpoint.service_namespace
    if endpoint.service_version:
        attrs["service.version"] = endpoint.service_version
    return Resource(attrs)
