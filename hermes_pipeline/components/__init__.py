"""Built-in component kinds, implemented with the public component API (spec 03 §15.2, CFG-85)."""
