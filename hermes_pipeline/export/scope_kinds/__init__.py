"""One small module per scope kind: the Hermes hooks of one kind of scope → scope events and marks.

Each module holds one class that receives the one :class:`~hermes_pipeline.export.scopes.ScopeTracker`
(open-scope state, the ``start`` / ``end`` / ``mark`` primitives, publication and pairing) and projects
its hooks onto it (spec 04 §2.11, FMT-24):

- :mod:`.session` — ``session`` scopes, segments, compaction (rows 1-2, 21);
- :mod:`.trigger` — ``trigger.process``, the gateway dispatch (rows 3-4);
- :mod:`.turn` — ``agent.run``, one turn (rows 5-6);
- :mod:`.llm_call` — ``llm.call``, one provider attempt (rows 7-9);
- :mod:`.tool_call` — one tool call (rows 10-11);
- :mod:`.approval` — approval and human-input marks (rows 12-15);
- :mod:`.subagent` — a subagent's session under its delegating call (rows 16-17);
- :mod:`.skill` — skill marks and the detached ``skill.run`` scope (rows 18-20).

No kind inherits from the tracker or from another kind. What two kinds share goes through the tracker
(``on_session_closing``, ``on_session_closed``, ``set_reopener``) or an explicit call to the other kind,
passed in (the turn kind ends the triggers and skill runs). The hooks object that pluggy sees,
:class:`~hermes_pipeline.export.scope_hooks.ScopePlugin`, composes the tracker and these kinds.
"""
