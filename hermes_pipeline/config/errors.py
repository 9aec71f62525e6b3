"""The typed error of the configuration layer.

Every :class:`ConfigError` names the file, the line when the parser knows it, the key path and
what was expected, and never the value found (which may be a destination or a credential).
"""

from __future__ import annotations

from pathlib import Path

from ..contract.errors import HermesPipelineError


class ConfigError(HermesPipelineError):
    """A pipeline file, manifest or profile configuration could not be used.

    Attributes:
        path: the file the problem is in, or ``None`` when it is not about one file.
        line: 1-based line number when the parser knows it, else ``None``.
        key: dotted key path (``components[0].config.atof.sinks[1].url``), or ``None``.
        message: what was wrong and what was expected.
        code: the diagnostic code (``pipeline.invalid`` unless a more specific one applies).
        suggestion: the valid kind, key or value closest to what was written ("did you mean"), or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        key: str | None = None,
        code: str = "pipeline.invalid",
        suggestion: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.key = key
        self.message = message
        self.code = code
        self.suggestion = suggestion
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "")
        parts = [p for p in (where, self.key) if p]
        return ": ".join([*parts, self.message])


class NativeRuntimeRequired(ConfigError):
    """A configuration needs the optional NeMo Relay native runtime, which is not available (CFG-28, CFG-60)."""
