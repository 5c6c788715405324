"""Serve a built site on the loopback interface."""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
"""The only interface the viewer binds to."""


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class SiteServer:
    """A static HTTP server for a built site, bound to 127.0.0.1 only, running in a thread.

    Args:
        site: The site directory (holding ``index.html``).
        port: TCP port; 0 picks a free one.

    Raises:
        OSError: If the port is taken.
    """

    def __init__(self, site: Path, port: int = 0):
        handler = functools.partial(_QuietHandler, directory=str(Path(site)))
        self._httpd = ThreadingHTTPServer((HOST, port), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="mafialab-view", daemon=True)

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The site URL, ``http://127.0.0.1:<port>/``."""
        return f"http://{HOST}:{self.port}/"

    def start(self) -> SiteServer:
        """Start serving in a daemon thread; returns ``self``."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
