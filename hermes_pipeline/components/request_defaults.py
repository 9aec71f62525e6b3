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
from typing import Any, ClassVar, Final

from ..config.checks import (
    Check, boolean, check_keys, integer, nonblank, number, one_of, string, table,
)
from ..config.policy import LEVELS, ValidationContext
from ..engine.plugins import ComponentContext


def _stop(value: Any) -> str | None:
    """A stop sequence or an array of at most 4 of them (OpenAI chat completions)."""
    if isinstance(value, str) or (isinstance(value, list) and len(value) <= 4
                                  and all(isinstance(v, str) for v in value)):
        return None
    return "expected a string or an array of at most 4 strings"


def _tool_choice(value: Any) -> str | None:
    """``none`` / ``auto`` / ``required``, or a table naming one tool."""
    if isinstance(value, dict) or value in ("none", "auto", "required"):
        return None
    return "expected 'none', 'auto', 'required' or a table naming a tool"


LLM_KEYS: Final[dict[str, Check]] = {
    "model": nonblank,
    "temperature": number(0, 2),
    "top_p": number(0, 1),
    "max_tokens": integer(1),
    "max_completion_tokens": integer(1),
    "n": integer(1),
    "presence_penalty": number(-2, 2),
    "frequency_penalty": number(-2, 2),
    "seed": integer(),
    "stop": _stop,
    "user": string,
    "logprobs": boolean,
    "top_logprobs": integer(0),
    "parallel_tool_calls": boolean,
    "tool_choice": _tool_choice,
    "response_format": table,
    "reasoning_effort": one_of("minimal", "low", "medium", "high"),
    "service_tier": one_of("auto", "default", "flex", "priority"),
    "metadata": table,
    "extra_body": table,
    "extra_headers": table,
}
"""The OpenAI-compatible request keys ``llm`` may default, each with its type and range; any other key
is an unknown field (so ``temprature`` gets a "did you mean")."""

POLICY_KEYS: Final[dict[str, Check]] = {"unknown_field": one_of(*LEVELS), "unsupported_value": one_of(*LEVELS)}


class RequestDefaultsComponent:
    """Fills missing LLM request keys and tool arguments with configured defaults."""

    kind: ClassVar[str] = "request_defaults"

    @classmethod
    def validate_config(cls, config: dict[str, Any], vctx: ValidationContext) -> None:
        """``llm``: a table of request keys (:data:`LLM_KEYS`, each checked by type and range);
        ``tools``: a table of argument tables keyed by tool name; ``policy``: the component policy."""
        check_keys(vctx, (), config, {"llm": table, "tools": table, "policy": table})
        llm = config.get("llm")
        if isinstance(llm, dict):
            check_keys(vctx, ("llm",), llm, LLM_KEYS)
        policy = config.get("policy")
        if isinstance(policy, dict):
            check_keys(vctx, ("policy",), policy, POLICY_KEYS)
        tools = config.get("tools")
        if isinstance(tools, dict):
            for name, defaults in tools.items():
                if not name.strip():
                    vctx.unsupported_value(("tools", name), "expected a non-blank tool name")
                elif not isinstance(defaults, dict):
                    vctx.unsupported_value(("tools", name), "expected a table of default arguments")

    @classmethod
    def describe_activation(cls, config: Mapping[str, Any]) -> list[str]:
        """The middleware activation registers (empty when ``llm`` and ``tools`` are both empty)."""
        out = []
        if config.get("llm"):
            out.append("llm_request middleware (request defaults)")
        if config.get("tools"):
            out.append("tool_request middleware (tool argument defaults)")
        return out

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
