"""Exported traces read back as a tree: ``load_trace(path)`` then ``render_trace(trace)``.

- :mod:`.formats`: reading ATOF JSON Lines (pairing, nesting) and ATIF trajectories (steps, tool
  results, embedded subagents);
- :mod:`.model`: the tree (:class:`Trace`, :class:`TraceNode`) and :class:`TraceFileError`;
- :mod:`.view`: marking the slowest / heaviest / failed steps and rendering.
"""

from .view import Trace, TraceFileError, TraceNode, load_trace, mark_outliers, render_trace, trace_data

__all__ = ["Trace", "TraceFileError", "TraceNode", "load_trace", "mark_outliers", "render_trace", "trace_data"]
