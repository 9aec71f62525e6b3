"""How deep a YAML text nests, measured before any loader builds it (spec CFG: a deep file is a typed error).

libyaml's composer (``yaml.CSafeLoader``, what reads ``config.yaml``) recurses once per nested collection with no
limit: a file of 50,000 nested ``[`` (100 KB, far under any size cap) overflows the C stack and kills the process
with SIGSEGV, before any ``except`` can run; the pure-Python loaders (PyYAML's, ruamel.yaml's) raise
``RecursionError`` instead. :func:`yaml_too_deep` measures the nesting first, in one linear pass over the text's
*parse events* (libyaml's scanner and parser are iterative, not recursive): every flow collection (``[``, ``{``)
and every block collection (an indentation level of a mapping, a ``-`` sequence) opened is one level. Because the
events come from the YAML scanner itself, a ``[`` in a quoted scalar, in a comment or in a block scalar (``|``,
``>``) is never counted, and a shallow file is never refused. The pass stops at the first level past the limit,
so its cost is linear in the text (the scanner's work per token is bounded by the nesting it has reached).

:data:`MAX_NESTING` (200) is the one nesting limit of every document the package parses from a file: the JSON
readers (:data:`hermes_pipeline.readers.files.MAX_DEPTH`) use it too. (The host layer's one YAML reading,
``skills.external_dirs`` in :mod:`hermes_pipeline.host.skill_layout`, uses the pure-Python loader, whose
``RecursionError`` it catches: it cannot crash the process.) Real configuration nests under ten levels.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["MAX_NESTING", "nesting_message", "yaml_too_deep"]

MAX_NESTING: Final = 200
"""The deepest nesting of collections accepted in a YAML (or JSON) document read from a file."""


def nesting_message(line: int, limit: int = MAX_NESTING) -> str:
    """The one wording of the refusal (``"nesting too deep: ..."``)."""
    return f"nesting too deep: more than {limit} nested collections (line {line}); a configuration nests a few levels"


def yaml_too_deep(text: str, limit: int = MAX_NESTING) -> int | None:
    """The 1-based line where the YAML ``text`` first nests deeper than ``limit`` collections, ``None`` when it does
    not (or is not YAML: the caller's own loader then reports that, never past the limit)."""
    if "[" not in text and "{" not in text \
            and text.count("\n") + 1 + text.count("-") + text.count("?") <= limit:
        return None  # no flow collection, and a line opens at most one block collection and one per indicator

    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    starts = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    depth = 0
    try:
        while True:
            event = loader.get_event()
            if event is None:
                return None
            if isinstance(event, starts):
                depth += 1
                if depth > limit:
                    mark = getattr(event, "start_mark", None)
                    return (mark.line + 1) if mark is not None else 1
            elif isinstance(event, ends):
                depth -= 1
            elif isinstance(event, yaml.StreamEndEvent):
                return None
    except (yaml.YAMLError, ValueError, RecursionError):
        return None  # not YAML before it nested too deep: the loader reports it (no deeper than reached here)
    finally:
        loader.dispose()
