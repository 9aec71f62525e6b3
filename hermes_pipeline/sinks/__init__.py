"""Built-in exporters and first-party consumers, each an ordinary plugin on the public API.

- :mod:`hermes_pipeline.sinks.atof`: ATOF 0.1 JSON-Lines file and HTTP stream sinks (spec 04 §2).

Sinks build on the shared export layer (:mod:`hermes_pipeline.export`: the scope plugin, the
bounded writer, destinations); a sink never imports another sink.
"""
