"""A fault-injecting HTTP proxy on loopback in front of the moto S3 server.

Every request the engine sends to the proxy's URL is forwarded to moto unchanged (headers, body,
signature), unless the fault plan picks it: then the proxy answers as a failing S3 would, with

- `500`: HTTP 500 InternalError,
- `503`: HTTP 503 ServiceUnavailable,
- `slowdown`: HTTP 503 SlowDown, S3's throttling answer,
- `reset`: the connection closed with a TCP reset before any answer,
- `stall`: no answer for `stall_s` seconds (longer than the client's read timeout), then a reset,
- `truncate`: moto's answer with its body cut in half and the connection closed.

A plan is either a queue of faults for the next requests that match (`fail_next`) or a random rate
from a seed (`fail_randomly`); `stats` counts requests and each kind of fault injected, so a test
can tell that its faults happened. The proxy runs on threads of the test process; writers and readers
in other processes (Ray workers, killed writers) reach it through its URL like any endpoint.
"""
from __future__ import annotations

import contextlib
import http.client
import random
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

FAULT_KINDS = ("500", "503", "slowdown", "reset", "stall", "truncate")
_ANSWERS = {
    "500": (500, "InternalError", "We encountered an internal error. Please try again."),
    "503": (503, "ServiceUnavailable", "Service is unable to handle request."),
    "slowdown": (503, "SlowDown", "Please reduce your request rate."),
}
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}

Match = Callable[[str, str], bool]


def any_request(method: str, path: str) -> bool:
    return True


@dataclass
class FaultPlan:
    """Which requests fail and how; shared by the proxy's threads, so every change holds the lock."""

    stall_s: float = 5.0
    _queue: list[tuple[Match, str]] = field(default_factory=list)
    _rate: float = 0.0
    _kinds: tuple[str, ...] = ()
    _rng: random.Random = field(default_factory=random.Random)
    _budget: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, kind: str, count: int = 1, match: Match = any_request) -> None:
        """The next `count` requests for which `match(method, path)` holds fail with `kind`."""
        _check_kind(kind)
        with self._lock:
            self._queue.extend([(match, kind)] * count)

    def fail_randomly(self, rate: float, seed: int, kinds: tuple[str, ...] = FAULT_KINDS,
                      budget: int | None = None) -> None:
        """Each request fails with probability `rate`, with a kind drawn from `kinds`, from a seeded
        generator; at most `budget` faults in all (None: no bound)."""
        for kind in kinds:
            _check_kind(kind)
        with self._lock:
            self._rate, self._kinds, self._rng, self._budget = rate, kinds, random.Random(seed), budget

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self._rate, self._budget = 0.0, None

    def pick(self, method: str, path: str) -> str | None:
        """The fault for this request, or None to forward it."""
        with self._lock:
            for i, (match, kind) in enumerate(self._queue):
                if match(method, path):
                    del self._queue[i]
                    return kind
            if self._rate and self._budget != 0 and self._rng.random() < self._rate:
                if self._budget is not None:
                    self._budget -= 1
                return self._rng.choice(self._kinds)
        return None


def _check_kind(kind: str) -> None:
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULT_KINDS)}")


class S3FaultProxy:
    """The proxy, listening on a free loopback port from construction until `close()`."""

    def __init__(self, upstream: str, plan: FaultPlan | None = None):
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.plan = plan or FaultPlan()
        self.stats: Counter[str] = Counter()
        self._stats_lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="s3-fault-proxy", daemon=True)
        self._thread.start()

    def count(self, key: str) -> None:
        with self._stats_lock:
            self.stats[key] += 1

    @property
    def faults_injected(self) -> int:
        with self._stats_lock:
            return sum(n for k, n in self.stats.items() if k in FAULT_KINDS)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(proxy: S3FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def _body(self) -> bytes:
            """The request body as sent: a chunked body is kept chunked, trailers and all (the SDK signs
            uploads as aws-chunked with a checksum trailer), to be forwarded byte for byte."""
            if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))
            raw = []
            while True:
                line = self.rfile.readline()
                raw.append(line)
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    break
                raw.append(self.rfile.read(size + 2))
            while True:
                line = self.rfile.readline()
                raw.append(line)
                if line in (b"\r\n", b"\n", b""):
                    return b"".join(raw)

        def _reset(self) -> None:
            # SO_LINGER with a zero timeout: close() sends RST, as a dropped connection does.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

        def _forward(self, body: bytes) -> tuple[int, str, list[tuple[str, str]], bytes]:
            upstream = http.client.HTTPConnection(*proxy.upstream, timeout=60)
            try:
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in _HOP_BY_HOP and k.lower() != "expect"}
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    headers["Transfer-Encoding"] = "chunked"
                upstream.request(self.command, self.path, body=body, headers=headers)
                answer = upstream.getresponse()
                return answer.status, answer.reason, answer.getheaders(), answer.read()
            finally:
                upstream.close()

        def _answer(self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes,
                    cut: bool = False) -> None:
            # A HEAD answer has no body: moto's length header is the object's, and an error has none at all
            # (written, its bytes would read as the start of the next answer on the connection).
            self.send_response_only(status, reason)
            head = self.command == "HEAD"
            upstream_length = any(k.lower() == "content-length" for k, _ in headers)
            for k, v in headers:
                if k.lower() not in _HOP_BY_HOP and (head or k.lower() != "content-length"):
                    self.send_header(k, v)
            if not head or not upstream_length:
                self.send_header("Content-Length", "0" if head else str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body[: len(body) // 2] if cut else body)
            self.wfile.flush()
            if cut:
                self._reset()

        def _handle(self) -> None:
            body = self._body()
            proxy.count("requests")
            kind = proxy.plan.pick(self.command, self.path)
            if kind is None:
                self._answer(*self._forward(body))
                return
            proxy.count(kind)
            if kind in _ANSWERS:
                status, code, message = _ANSWERS[kind]
                xml = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
                       f"<Message>{message}</Message><RequestId>quiver-fault</RequestId></Error>").encode()
                self._answer(status, code, [("Content-Type", "application/xml")], xml)
                self.close_connection = True
            elif kind == "reset":
                self._reset()
            elif kind == "stall":
                time.sleep(proxy.plan.stall_s)
                self._reset()
            else:
                status, reason, headers, answer = self._forward(body)
                self._answer(status, reason, headers, answer, cut=len(answer) > 1)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

    return Handler


@contextlib.contextmanager
def fault_proxy(upstream: str) -> Iterator[S3FaultProxy]:
    """A proxy in front of `upstream` for the block."""
    proxy = S3FaultProxy(upstream)
    try:
        yield proxy
    finally:
        proxy.close()
