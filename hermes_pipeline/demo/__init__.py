"""Demo support: a deterministic local model server and a tiny client for it.

Everything here is stdlib only and binds to loopback addresses only, so the
reference agent, the demo and the tests can run offline and reproducibly.
"""
