"""The ``hermes-pipeline`` command line."""
