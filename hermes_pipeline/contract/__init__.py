"""The contracts: hook specifications, schema versions, names and enumerations.

This layer holds no behaviour. Everything else in ``hermes_pipeline`` imports
from here; nothing here imports from the rest of the package.
"""
