"""Running the application with uvicorn on a socket the CLI bound (so it reports a port in use itself)."""

from __future__ import annotations

import socket

import uvicorn
from starlette.types import ASGIApp


def run(app: ASGIApp, listener: socket.socket, *, proxied: bool = False) -> None:
    """Serve until Ctrl-C (or SIGTERM); uvicorn finishes the requests in flight, then returns."""
    config = uvicorn.Config(app, log_level="warning", access_log=False, proxy_headers=proxied,
                            server_header=False, date_header=False, timeout_graceful_shutdown=5)
    uvicorn.Server(config).run(sockets=[listener])
