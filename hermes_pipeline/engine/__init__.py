"""The engine: registry, fail-open dispatch, middleware runners, sanitizer, plugin loading."""
