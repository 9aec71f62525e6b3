"""Typed errors of the export layer.

:class:`ExportConfigError` is what an operator meets (a bad ``atof`` table); :class:`DeliveryError`
is what a :class:`~hermes_pipeline.export.writer.Destination` raises to tell the writer whether a
failed write may be retried. Neither message ever contains a header value, a credential or a
destination URL (spec 03 CFG-86, spec 04 FMT-82).
"""

from __future__ import annotations

from ..contract.errors import HermesPipelineError


class ExportConfigError(HermesPipelineError, ValueError):
    """An exporter configuration is invalid.

    Args:
        path: the dotted key path of the offending value (``atof.sinks[0].mode``).
        message: what is wrong and what to do; never contains a secret or a destination value.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class DeliveryError(Exception):
    """A destination could not deliver (part of) a batch.

    Args:
        description: short, credential-free reason such as ``"HTTP 503"``.
        retryable: whether the writer may try the undelivered items again.
        delivered: how many leading items of the batch were delivered before the failure.
        status: the HTTP status code, when there was one.
    """

    def __init__(self, description: str, *, retryable: bool, delivered: int = 0, status: int | None = None) -> None:
        super().__init__(description)
        self.retryable = retryable
        self.delivered = delivered
        self.status = status

    @property
    def kind(self) -> str:
        """A stable key for warn-once bookkeeping (``"HTTP 503"``, ``"ConnectionRefusedError"``)."""
        if self.status is not None:
            return f"HTTP {self.status}"
        cause = self.__cause__
        return type(cause).__name__ if cause is not None else str(self)
