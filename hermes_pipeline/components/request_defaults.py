"""``request_defaults``: a small example component that registers middleware (spec 02, spec 03 §15.2).

It fills in provider arguments and tool arguments that the host did not set::

    [[components]]
    kind = "request_defaults"

    [components.config.llm]          # llm_request middleware: keys missing from the request
    temperature = 0.2

    [components.config.tools.read_file]   # tool_request middleware, per tool name
    encoding = "utf-8"

Values already present are never overwritten. The component is built with the same public API as
any third-party component: ``kind``, ``validate_config``, a constructor taking the context, and
``activate()`` registering middleware through the context.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar

from ..config.checks import check_keys, table
from ..config.policy import ValidationContext
from ..engine.plugins import ComponentContext


class RequestDefaultsComponent:
    """Fills missing LLM request keys and tool arguments with configured defaults."""

    kind: ClassVar[str] = "request_defaults"

    @classmethod
    def validate_config(cls, config: dict[str, Any], vctx: ValidationContext) -> None:
        """``llm``: a table; ``tools``: a table of tables keyed by tool name; ``policy``: a table."""
        check_keys(vctx, (), config, {"llm": table, "tools": table, "policy": table})
        tools = config.get("tools")
        if isinstance(tools, dict):
            for name, defaults in tools.items():
                if not isinstance(defaults, dict):
                    vctx.unsupported_value(("tools", name), "expected a table of default arguments")

    def __init__(self, ctx: ComponentContext) -> None:
        self.ctx = ctx
        llm = ctx.config.get("llm")
        tools = ctx.config.get("tools")
        self.llm: Mapping[str, Any] = llm if isinstance(llm, Mapping) else {}
        self.tools: Mapping[str, Mapping[str, Any]] = tools if isinstance(tools, Mapping) else {}

    def activate(self) -> None:
        """Register ``llm_request`` / ``tool_request`` middleware for the configured sections."""
        if self.llm:
            self.ctx.register_middleware("llm_request", self.llm_request)
        if self.tools:
            self.ctx.register_middleware("tool_request", self.tool_request)

    def llm_request(self, request: dict[str, Any], **_: Any) -> dict[str, Any] | None:
        """Return the request with missing keys filled in, or ``None`` when nothing is missing."""
        missing = {k: v for k, v in self.llm.items() if k not in request}
        if not missing:
            return None
        return {"request": {**request, **copy.deepcopy(missing)}, "source": self.kind,
                "reason": "defaults for " + ", ".join(sorted(missing))}

    def tool_request(self, tool_name: str, args: dict[str, Any], **_: Any) -> dict[str, Any] | None:
        """Return the tool arguments with missing defaults filled in, or ``None``."""
        defaults = self.tools.get(tool_name) or {}
        missing = {k: v for k, v in defaults.items() if k not in args}
        if not missing:
            return None
        return {"args": {**args, **copy.deepcopy(missing)}, "source": self.kind,
                "reason": "defaults for " + ", ".join(sorted(missing))}
