"""Readers of what the sinks recorded (the top layer beside the CLI): they read files and import no sink.

- :mod:`hermes_pipeline.readers.trace`: ATOF JSON Lines and ATIF trajectories as a tree
  (``hermes-pipeline trace show``).
"""
