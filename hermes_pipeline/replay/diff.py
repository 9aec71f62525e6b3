"""Step-aligned comparison of two trajectories (spec 06 BOOK-32).

:func:`comparable_steps` reduces a trajectory (its subagents' steps follow their parent's) to what
behaviour means — ``source``, message text, tool calls (name and canonical arguments), observation
contents — leaving out timestamps, UUIDs and other ids. :func:`diff_trajectories` aligns two such
lists by position and reports every difference, the final answers and the token totals, with the
one-line verdict ``identical`` or ``diverged at step k``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .codec import canonical_json

__all__ = ["StepDiff", "TrajectoryDiff", "comparable_steps", "diff_trajectories", "final_answer", "token_totals",
           "total_cost"]


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def comparable_steps(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The behaviour of ``doc`` step by step (no timestamps, UUIDs or ids)."""
    out: list[dict[str, Any]] = []
    for step in doc.get("steps") or []:
        if not isinstance(step, Mapping):
            continue
        message = step.get("message")
        item: dict[str, Any] = {"source": step.get("source"),
                                "message": message if isinstance(message, str) else canonical_json(message)}
        calls = [(c.get("function_name"), canonical_json(_arguments(c.get("arguments"))))
                 for c in step.get("tool_calls") or [] if isinstance(c, Mapping)]
        if calls:
            item["tool_calls"] = calls
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, Mapping) else None
        contents = [r.get("content") for r in results or [] if isinstance(r, Mapping) and "content" in r]
        if contents:
            item["observations"] = contents
        out.append(item)
    for child in doc.get("subagent_trajectories") or []:
        if isinstance(child, Mapping):
            out.extend(comparable_steps(child))
    return out


def final_answer(doc: Mapping[str, Any]) -> str | None:
    """The run's final output (``extra.hermes.final_output``, else the last agent message)."""
    extra = doc.get("extra")
    hermes = extra.get("hermes") if isinstance(extra, Mapping) else None
    if isinstance(hermes, Mapping) and isinstance(hermes.get("final_output"), str):
        return str(hermes["final_output"])
    for step in reversed(doc.get("steps") or []):
        if isinstance(step, Mapping) and step.get("source") == "agent" and isinstance(step.get("message"), str) \
                and step["message"]:
            return str(step["message"])
    return None


def token_totals(doc: Mapping[str, Any]) -> dict[str, int]:
    """``{prompt, completion}`` from ``final_metrics`` (0 when absent)."""
    found = doc.get("final_metrics")
    metrics: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    return {"prompt": int(metrics.get("total_prompt_tokens") or 0),
            "completion": int(metrics.get("total_completion_tokens") or 0)}


def total_cost(doc: Mapping[str, Any]) -> float | None:
    """``final_metrics.total_cost_usd`` (``None`` when the run has no priced calls)."""
    found = doc.get("final_metrics")
    cost = found.get("total_cost_usd") if isinstance(found, Mapping) else None
    return float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None


@dataclass
class StepDiff:
    """One aligned step that differs: which fields, and a unified diff of the message text."""

    step: int
    fields: list[str]
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    message_diff: list[str] = field(default_factory=list)


@dataclass
class TrajectoryDiff:
    """The comparison of two trajectories."""

    steps: list[StepDiff]
    old_final: str | None
    new_final: str | None
    old_tokens: dict[str, int]
    new_tokens: dict[str, int]
    compared_steps: int
    old_cost: float | None = None
    new_cost: float | None = None

    @property
    def identical(self) -> bool:
        """No step, final answer or token total differs."""
        return not self.steps and self.old_final == self.new_final and self.old_tokens == self.new_tokens

    @property
    def diverged_at(self) -> int | None:
        """The first differing step (1-based), or ``None``."""
        if self.steps:
            return self.steps[0].step
        return None if self.identical else self.compared_steps

    @property
    def verdict(self) -> str:
        """``identical`` or ``diverged at step k``."""
        return "identical" if self.identical else f"diverged at step {self.diverged_at}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form (``--diff json``)."""
        return {"verdict": self.verdict, "identical": self.identical, "diverged_at_step": self.diverged_at,
                "steps": [{"step": d.step, "fields": d.fields, "old": d.old, "new": d.new,
                           "message_diff": d.message_diff} for d in self.steps],
                "final_answer": {"old": self.old_final, "new": self.new_final,
                                 "changed": self.old_final != self.new_final},
                "tokens": {"old": self.old_tokens, "new": self.new_tokens},
                "cost_usd": {"old": self.old_cost, "new": self.new_cost}}

    def to_text(self) -> str:
        """Human-readable: each differing step, the final answers, the token totals, the verdict last."""
        lines: list[str] = []
        for d in self.steps:
            verb = "differs" if len(d.fields) == 1 and not d.fields[0].endswith("s") else "differ"
            lines.append(f"step {d.step}: {', '.join(d.fields)} {verb}")
            if d.old is None or d.new is None:
                lines.append(f"  only in the {'new' if d.old is None else 'old'} run: "
                             f"{(d.new or d.old or {}).get('source')} step")
            for key in ("source", "tool_calls", "observations"):
                if key in d.fields and d.old is not None and d.new is not None:
                    lines.append(f"  {key}: {json.dumps(d.old.get(key), ensure_ascii=False)[:300]} -> "
                                 f"{json.dumps(d.new.get(key), ensure_ascii=False)[:300]}")
            lines.extend("  " + line for line in d.message_diff)
        if self.old_final != self.new_final:
            lines.append(f"final answer: {json.dumps(self.old_final, ensure_ascii=False)} -> "
                         f"{json.dumps(self.new_final, ensure_ascii=False)}")
        if self.old_tokens != self.new_tokens:
            lines.append(f"tokens: prompt {self.old_tokens['prompt']} -> {self.new_tokens['prompt']}, completion "
                         f"{self.old_tokens['completion']} -> {self.new_tokens['completion']}")
        if self.old_cost != self.new_cost:
            lines.append(f"cost: {_usd(self.old_cost)} -> {_usd(self.new_cost)}")
        lines.append(self.verdict)
        return "\n".join(lines)


def _usd(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:.6f}"


def diff_trajectories(old: Mapping[str, Any], new: Mapping[str, Any]) -> TrajectoryDiff:
    """Compare ``old`` and ``new`` step by step (see the module docstring)."""
    a, b = comparable_steps(old), comparable_steps(new)
    diffs: list[StepDiff] = []
    for index in range(max(len(a), len(b))):
        x = a[index] if index < len(a) else None
        y = b[index] if index < len(b) else None
        if x == y:
            continue
        if x is None or y is None:
            diffs.append(StepDiff(index + 1, ["presence"], x, y))
            continue
        fields = [key for key in ("source", "message", "tool_calls", "observations") if x.get(key) != y.get(key)]
        message_diff = []
        if "message" in fields:
            message_diff = [line.rstrip("\n") for line in difflib.unified_diff(
                str(x.get("message")).splitlines(), str(y.get("message")).splitlines(),
                "old", "new", lineterm="", n=1)]
        diffs.append(StepDiff(index + 1, fields, x, y, message_diff))
    return TrajectoryDiff(diffs, final_answer(old), final_answer(new), token_totals(old), token_totals(new),
                          max(len(a), len(b)), total_cost(old), total_cost(new))
