"""A small HTTP file server for the prepare tests: Range requests, a request log, fault injection.

Serves `files` (URL path -> bytes) from a `ThreadingHTTPServer` on 127.0.0.1, port 0, in a
daemon thread. Each path can be given a queue of faults, consumed one per request:

- an int (404, 500, ...): answer with that status and a short body;
- "cut": send the full Content-Length but only half the body, then close the connection;
- "norange": ignore the request's Range header (answer 200 with the whole file);
- "slow": send the headers and half the body, wait a second, then send the rest.

Hostile servers, for tests/test_hostile_downloads.py (each ends when the client goes away, and
after at most HOSTILE_SECONDS in any case, so a test that fails never leaves a busy thread):

- "drip": the headers, then the body at 4 bytes a second;
- "header_drip": a status line, then one header at 4 bytes a second, never ending;
- "endless": a 200 without Content-Length whose body of zeros never ends;
- "loop": a 302 back to the same path, every time;
- ("redirect", URL): a 302 to URL;
- "short_length" / "long_length": a Content-Length 10 bytes less / 1000 bytes more than the body
  (then the connection closes);
- "silent": accept the request and never answer;
- "huge_header": a 200 whose headers hold one 1 MiB header;
- "html": a 200 with an HTML error page instead of the file.

`always(path, fault)` gives every request to PATH that fault (after any queued by `inject`).
Every request is logged as a dict(method, path, range) before it is answered.
"""

from __future__ import annotations

import select
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

HOSTILE_SECONDS = 30.0


class PrepareServer:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.faults: dict[str, deque] = {}
        self.sticky: dict[str, Any] = {}
        self.log: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection: "cut" is a real EOF
            timeout = 10  # a stuck client cannot hold a handler thread forever

            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_HEAD(self):
                self._serve(head=True)

            def do_GET(self):
                self._serve(head=False)

            def _serve(self, head: bool) -> None:
                path = self.path.split("?", 1)[0]
                rng = self.headers.get("Range")
                with server._lock:
                    server.log.append(dict(method=self.command, path=path, range=rng))
                    queue = server.faults.get(path)
                    fault = queue.popleft() if queue else server.sticky.get(path)
                    data = server.files.get(path)
                if isinstance(fault, int):
                    self._status(fault)
                    return
                try:
                    if self._hostile(fault, data or b""):
                        return
                except OSError:  # the client went away: what these faults wait for
                    return
                if data is None:
                    self._status(404)
                    return
                start, end = 0, len(data)
                partial = False
                if rng and fault != "norange":
                    parsed = _parse_range(rng, len(data))
                    if parsed is None:
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    start, end = parsed
                    partial = True
                body = data[start:end]
                self.send_response(206 if partial else 200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Accept-Ranges", "bytes")
                if partial:
                    self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
                self.end_headers()
                if head:
                    return
                if fault == "cut":
                    self.wfile.write(body[: max(1, len(body) // 2)])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if fault == "slow":
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    time.sleep(1.0)
                    body = body[len(body) // 2 :]
                self.wfile.write(body)

            def _hostile(self, fault: Any, data: bytes) -> bool:
                """Answer as the hostile FAULT does; False when FAULT is not one of them."""
                if fault == "loop" or (isinstance(fault, tuple) and fault[0] == "redirect"):
                    self.send_response(302)
                    self.send_header("Location", self.path if fault == "loop" else fault[1])
                    self.send_header("Connection", "close")  # else wget may reuse the closed connection
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif fault == "header_drip":
                    self.wfile.write(b"HTTP/1.0 200 OK\r\nX-Slow: ")
                    self._trickle(b"a" * int(4 * HOSTILE_SECONDS))
                elif fault == "silent":
                    select.select([self.connection], [], [], HOSTILE_SECONDS)  # until the client closes
                elif fault in ("drip", "endless"):
                    self.send_response(200)
                    if fault == "drip":
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self._trickle(data if fault == "drip" else None)
                elif fault in ("short_length", "long_length", "huge_header", "html"):
                    body = b"<html><body>Error: quota exceeded</body></html>\n" if fault == "html" else data
                    length = len(body) + {"short_length": -10, "long_length": 1000}.get(fault, 0)
                    self.send_response(200)
                    if fault == "huge_header":
                        self.send_header("X-Padding", "x" * (1 << 20))
                    self.send_header("Content-Length", str(max(0, length)))
                    self.end_headers()
                    self.wfile.write(body)
                    self.close_connection = True
                else:
                    return False
                return True

            def _trickle(self, data: Optional[bytes]) -> None:
                """DATA at 4 bytes a second, or (None) zeros as fast as the client takes them."""
                end = time.monotonic() + HOSTILE_SECONDS
                sent = 0
                while time.monotonic() < end and (data is None or sent < len(data)):
                    if data is None:
                        self.wfile.write(bytes(1 << 16))
                    else:
                        self.wfile.write(data[sent : sent + 1])
                        self.wfile.flush()
                        sent += 1
                        time.sleep(0.25)

            def _status(self, code: int) -> None:
                body = f"error {code}\n".encode()
                self.send_response(code)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs=dict(poll_interval=0.05), daemon=True)

    def start(self) -> PrepareServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def url(self, path: str) -> str:
        return self.base + path

    def add(self, path: str, data: bytes) -> str:
        with self._lock:
            self.files[path] = data
        return self.url(path)

    def inject(self, path: str, *faults) -> None:
        with self._lock:
            self.faults[path] = deque(faults)

    def always(self, path: str, fault: Any) -> None:
        with self._lock:
            self.sticky[path] = fault

    def requests(self, path: Optional[str] = None) -> list[dict]:
        with self._lock:
            return [r for r in self.log if path is None or r["path"] == path]

    def reset(self) -> None:
        with self._lock:
            self.log.clear()
            self.faults.clear()
            self.sticky.clear()


def _parse_range(header: str, size: int) -> Optional[tuple[int, int]]:
    """`bytes=N-` or `bytes=N-M` -> (start, end exclusive); None when unsatisfiable."""
    unit, _, spec = header.partition("=")
    if unit.strip() != "bytes" or "," in spec:
        return None
    first, _, last = spec.strip().partition("-")
    try:
        if first == "":
            n = int(last)
            return (max(0, size - n), size) if n > 0 and size > 0 else None
        start = int(first)
        end = int(last) + 1 if last else size
    except ValueError:
        return None
    if start >= size or end <= start:
        return None
    return start, min(end, size)
