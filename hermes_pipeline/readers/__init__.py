"""Readers of what the sinks recorded (the top layer beside the CLI): they read files and import no sink.

- :mod:`hermes_pipeline.readers.files`: reading a file a user names safely (regular files only, at most a
  size limit, JSON at most so deep), :class:`~hermes_pipeline.readers.files.InputFileError` naming the file
  and the field;
- :mod:`hermes_pipeline.readers.shapes`: the types readers rely on in ATIF trajectories and ATOF events;
- :mod:`hermes_pipeline.readers.trace`: ATOF JSON Lines and ATIF trajectories as a tree
  (``hermes-pipeline trace show``).
"""
