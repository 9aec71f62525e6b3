"""Run ``phoenix serve`` with its OTLP/gRPC collector bound to the loopback interface (test helper).

Arize Phoenix 20.26 binds its gRPC collector to ``[::]`` (every interface) whatever ``PHOENIX_HOST`` says, and
no environment variable sets that host; only its port (``PHOENIX_GRPC_PORT``). The Phoenix test must not open
a port on other interfaces, so this launcher rewrites the ``[::]`` bind address of the gRPC server Phoenix
creates to ``127.0.0.1`` before handing over to Phoenix's own command line. Everything else is configured
through Phoenix's documented variables by the caller (``tests/sinks/otel/test_phoenix.py``).

Usage: ``python tests/sinks/otel/_phoenix_launch.py`` with ``PHOENIX_HOST=127.0.0.1``, ``PHOENIX_PORT``,
``PHOENIX_GRPC_PORT`` and ``PHOENIX_WORKING_DIR`` set.
"""

from __future__ import annotations

import sys
from typing import Any


def _loopback_grpc() -> None:
    import grpc.aio

    create = grpc.aio.server

    def server(*args: Any, **kwargs: Any) -> Any:
        created = create(*args, **kwargs)
        bind = created.add_insecure_port
        created.add_insecure_port = lambda address: bind(address.replace("[::]:", "127.0.0.1:", 1))
        return created

    grpc.aio.server = server


def main() -> None:
    _loopback_grpc()
    from phoenix.server.main import main as phoenix_main

    sys.argv = ["phoenix", "serve"]
    phoenix_main()


if __name__ == "__main__":
    main()
