"""HTTP with the standard library: keys, retries, Retry-After and the RateLimit headers."""

from __future__ import annotations

import email.utils
import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Tuple

from .errors import MdsError, error_for

USER_AGENT = "mds-client-python/0.1.0"


def retry_after_seconds(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` as seconds (a number or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_ITEM = re.compile(r'"?([A-Za-z0-9_-]+)"?\s*((?:;\s*[a-z]+=\d+\s*)*)')


def parse_ratelimit(value: Optional[str]) -> Dict[str, Dict[str, int]]:
    """``RateLimit: "minute";r=4;t=37, "day";r=999;t=43237`` → {"minute": {"r": 4, "t": 37}, …}."""
    out: Dict[str, Dict[str, int]] = {}
    if not value:
        return out
    for part in value.split(","):
        m = _ITEM.match(part.strip())
        if not m:
            continue
        params = dict(re.findall(r"([a-z]+)=(\d+)", m.group(2)))
        out[m.group(1)] = {k: int(v) for k, v in params.items()}
    return out


class Response:
    """A successful answer: status, headers (lower-case names) and the open body stream."""

    def __init__(self, status: int, headers: Dict[str, str], raw: Any) -> None:
        self.status = status
        self.headers = headers
        self.raw = raw

    def read(self) -> bytes:
        try:
            return self.raw.read()
        finally:
            self.raw.close()

    def json(self) -> Any:
        return json.loads(self.read().decode("utf-8"))


class Transport:
    """Sends requests; waits and retries where that is safe.

    Retried: network errors, 5xx, 409/4091 (batch in progress), 429 and 403/4030 (rate limit,
    waiting ``Retry-After``), up to ``max_retries`` times and at most ``max_wait`` seconds
    per wait. Before a request, a ``RateLimit`` header that said nothing is left (``r=0``)
    makes the client wait its ``t`` seconds instead of spending a refused request.
    """

    def __init__(
        self,
        base_url: str,
        timeout: float = 300.0,
        max_retries: int = 5,
        max_wait: float = 120.0,
        backoff: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_wait = max_wait
        self.backoff = backoff
        self.sleep = sleep
        #: The last ``RateLimit`` header, parsed ({"minute": {"r": …, "t": …}, "day": …}).
        self.rate_limit: Dict[str, Dict[str, int]] = {}
        self._not_before = 0.0

    def url(self, path: str, params: Optional[Iterable[Tuple[str, str]]] = None) -> str:
        url = path if path.startswith("http") else self.base_url + path
        if params:
            url += "?" + urllib.parse.urlencode(list(params))
        return url

    def request(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        params: Optional[Iterable[Tuple[str, str]]] = None,
        body: Optional[bytes] = None,
    ) -> Response:
        url = self.url(path, list(params) if params is not None else None)
        delay = self.backoff
        attempt = 0
        while True:
            attempt += 1
            wait = self._not_before - time.time()
            if wait > 0:
                self.sleep(min(wait, self.max_wait))
            all_headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity", **headers}
            if body is not None:
                all_headers["Content-Type"] = "application/json"
            req = urllib.request.Request(url, data=body, method=method, headers=all_headers)
            try:
                raw = urllib.request.urlopen(req, timeout=self.timeout)
                hdrs = {k.lower(): v for k, v in raw.headers.items()}
                self._note_limits(hdrs)
                return Response(raw.status, hdrs, raw)
            except urllib.error.HTTPError as e:
                hdrs = {k.lower(): v for k, v in e.headers.items()} if e.headers else {}
                self._note_limits(hdrs)
                if e.code == 304:
                    # Not modified (If-None-Match): the caller's cached body is the answer.
                    e.close()
                    return Response(304, hdrs, _Bytes(b""))
                text = e.read()
                try:
                    answer = json.loads(text.decode("utf-8"))
                    if not isinstance(answer, dict):
                        answer = {"message": str(answer)}
                except ValueError:
                    answer = {"message": text[:300].decode("utf-8", "replace")}
                retry_after = retry_after_seconds(hdrs.get("retry-after"))
                err = error_for(e.code, answer, retry_after)
                # A batch whose every record was rejected (422 / 4221) is a result, not a failure:
                # its status record comes back like any other.
                if e.code == 422 and err.code == 4221:
                    return Response(e.code, hdrs, _Bytes(text))
                transient = (
                    e.code >= 500
                    or e.code == 429
                    or (e.code == 403 and err.code == 4030)
                    or (e.code == 409 and err.code == 4091)
                )
                if not transient or attempt > self.max_retries:
                    raise err
                pause = retry_after if retry_after is not None else delay
                if pause > self.max_wait:
                    raise err
            except (urllib.error.URLError, socket.timeout, ConnectionError) as e:
                if attempt > self.max_retries:
                    raise MdsError("cannot reach %s: %s" % (url, getattr(e, "reason", e))) from e
                pause = delay
            self.sleep(pause)
            delay = min(delay * 2, 30.0)

    def _note_limits(self, headers: Mapping[str, str]) -> None:
        limits = parse_ratelimit(headers.get("ratelimit"))
        if not limits:
            return
        self.rate_limit = limits
        exhausted = [v.get("t", 0) for v in limits.values() if v.get("r", 1) == 0]
        # Only a short window is worth waiting for; a spent daily quota is reported by the 403.
        short = [t for t in exhausted if t <= self.max_wait]
        self._not_before = time.time() + max(short) if short else 0.0


class _Bytes:
    """A body already read, with the same read()/close() as a live response."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def read(self) -> bytes:
        return self._data

    def close(self) -> None:
        pass
