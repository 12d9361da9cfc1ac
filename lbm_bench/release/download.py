"""The download of a release archive, guarded: ``urllib`` with a timeout on every wait and a
minimum rate over any ``timeout`` seconds (:class:`_RateGuard`, on the socket itself, so that
headers count too), stopped at ``max_size`` bytes, its SHA-256 computed as it streams
(:func:`download`). A failure is one :class:`FetchError` line.
"""

from __future__ import annotations

import hashlib
import http.client
import io
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from lbm_bench._atomic import describe_os_error
from lbm_bench._validation import one_line
from lbm_bench.protocol.memory import format_bytes

__all__ = ["BLOCK", "FetchError", "download", "words"]


#: Bytes read from the server at a time.
BLOCK = 1 << 20


class FetchError(RuntimeError):
    """A release could not be fetched: unreachable URL, wrong checksum, an archive that
    is corrupt, unsafe or not a valid release. The message is one line."""


class _RateGuard:
    """Counts the bytes the server sends and gives up when fewer than ``min_rate`` per
    second arrived over the last ``window`` seconds (the socket's own timeout catches a
    server that sends nothing at all)."""

    def __init__(self, window: float, min_rate: float) -> None:
        self.window, self.min_rate = window, min_rate
        self.start, self.count = time.monotonic(), 0

    def received(self, n: int) -> None:
        self.count += n
        elapsed = time.monotonic() - self.start
        if elapsed < self.window:
            return
        if self.count < self.min_rate * elapsed:
            raise TimeoutError(
                f"the server sent {self.count} bytes in {elapsed:.1f} s, slower than the minimum "
                f"of {self.min_rate:g} bytes/s (min_rate=)"
            )
        self.start, self.count = time.monotonic(), 0


class _GuardedRaw(io.RawIOBase):
    """A socket's raw reader that reports every read to a :class:`_RateGuard`."""

    def __init__(self, raw: io.RawIOBase, guard: _RateGuard) -> None:
        super().__init__()
        self._raw, self._guard = raw, guard

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        n = self._raw.readinto(buffer)
        if n is not None:
            self._guard.received(n)
        return n

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        self._raw.close()
        super().close()


def _guarded_connection(http_class, guard: _RateGuard):
    """``http_class`` (HTTP or HTTPS connection) whose responses read through ``guard``."""

    class GuardedResponse(http.client.HTTPResponse):
        def __init__(self, sock, *args, **kwargs) -> None:
            super().__init__(sock, *args, **kwargs)
            self.fp = io.BufferedReader(_GuardedRaw(self.fp.detach(), guard))

    def connect(host, **kwargs):
        connection = http_class(host, **kwargs)
        connection.response_class = GuardedResponse
        return connection

    return connect


class _Guarded:
    """A urllib handler whose connections' responses are read under ``guard`` (mixed in
    before the handler class, HTTP or HTTPS)."""

    def __init__(self, guard: _RateGuard) -> None:
        super().__init__()
        self.guard = guard

    def do_open(self, http_class, req, **kwargs):
        return super().do_open(_guarded_connection(http_class, self.guard), req, **kwargs)


class _GuardedHTTPHandler(_Guarded, urllib.request.HTTPHandler):
    pass


class _GuardedHTTPSHandler(_Guarded, urllib.request.HTTPSHandler):
    pass


def download(url: str, target: Path, *, timeout: float, min_rate: float, max_size: int,
              progress: bool) -> tuple[str, int]:
    """Stream ``url`` into ``target``; return its SHA-256 and size."""
    from tqdm.auto import tqdm

    digest = hashlib.sha256()
    size = 0
    guard = _RateGuard(timeout, min_rate)
    opener = urllib.request.build_opener(_GuardedHTTPHandler(guard), _GuardedHTTPSHandler(guard))
    too_big = f"{url}: refused: the archive is larger than max_size ({format_bytes(max_size)})"
    try:
        with opener.open(url, timeout=timeout) as response:
            total = response.headers.get("Content-Length")
            total = int(total) if total and total.isdigit() else None
            if total is not None and total > max_size:
                raise FetchError(too_big)
            with open(target, "wb") as handle, tqdm(
                total=total, unit="B", unit_scale=True, desc="downloading", disable=not progress,
            ) as bar:
                for block in iter(lambda: response.read(BLOCK), b""):
                    size += len(block)
                    if size > max_size:
                        raise FetchError(too_big)
                    handle.write(block)
                    digest.update(block)
                    bar.update(len(block))
    except urllib.error.HTTPError as exc:
        raise FetchError(f"cannot download {url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise FetchError(f"cannot download {url}: {words(exc.reason)}") from None
    # timeouts, resets, file:// errors
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise FetchError(f"cannot download {url}: {words(exc)}") from None
    return digest.hexdigest(), size


def words(value: Any) -> str:
    """A download's or an archive's error on one line, an operating system's error in words."""
    return one_line(describe_os_error(value) if isinstance(value, OSError) else value)
