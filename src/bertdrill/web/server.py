"""Running the application with uvicorn on a socket the CLI bound (so it reports a port in use itself)."""

from __future__ import annotations

import gc
import socket

import uvicorn
from starlette.types import ASGIApp


def run(app: ASGIApp, listener: socket.socket, *, proxied: bool = False) -> None:
    """Serve until Ctrl-C (or SIGTERM); uvicorn finishes the requests in flight, then returns."""
    config = uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=proxied,
                            server_header=False, date_header=False, timeout_graceful_shutdown=5)
    # Everything built so far (modules, the lessons' cards, templates) lives as long as the server: frozen, the
    # collector's full passes skip it. Unfrozen, each full pass walked it all with every request thread stopped
    # (134 ms, where a request takes 6 ms: the class server's slowest answers); frozen, 16 ms.
    gc.collect()
    gc.freeze()
    uvicorn.Server(config).run(sockets=[listener])
