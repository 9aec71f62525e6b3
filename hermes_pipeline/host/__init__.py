"""The host instrumentation API: what an agent runtime calls at each lifecycle point."""

from .context import CallContext, current_context, run_in_context
from .interaction import Approval, HumanInput
from .llm import ErrorInfo, LLMRequest, classify_error
from .message import MessageView, message_view
from .segments import SegmentPolicy
from .session import Host, Session, ToolsetSource
from .subagent import SubagentRun
from .turn import Turn

__all__ = [
    "Approval",
    "CallContext",
    "ErrorInfo",
    "Host",
    "HumanInput",
    "LLMRequest",
    "MessageView",
    "SegmentPolicy",
    "Session",
    "SubagentRun",
    "ToolsetSource",
    "Turn",
    "classify_error",
    "current_context",
    "message_view",
    "run_in_context",
]
