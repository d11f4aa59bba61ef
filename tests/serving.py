"""A real HTTP server for the tests that need one (a terminal's client, a browser): uvicorn on a free port of
127.0.0.1, in a thread, stopped when the test ends."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def listening(app: Any) -> Iterator[str]:
    """Serve the ASGI ``app`` until the block ends; its address (``http://127.0.0.1:PORT``)."""
    import uvicorn

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    running = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                            timeout_graceful_shutdown=2))
    thread = threading.Thread(target=running.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        running.should_exit = True
        thread.join(timeout=15)
        listener.close()
        assert not thread.is_alive(), "the server thread did not stop"
