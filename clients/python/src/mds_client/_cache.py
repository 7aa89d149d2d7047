"""An opt-in disk cache of query answers (``Client(cache_dir=…)``).

An answer with ``as_of`` at least ``SETTLED`` seconds in the past is immutable (the service
answers what the same request answered then, docs/point-in-time.md): it is served from disk
without a request. Any other answer is revalidated: the request carries the cached ETag as
``If-None-Match`` and a ``304`` means the cached body is still the answer (the ETag changes
exactly when a batch changes the dataset). Files are named by a hash of the URL; the key is not
part of it (every key sees the same data). Nothing is ever evicted: delete the directory.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import tempfile
from typing import Dict, Iterable, Optional, Tuple

#: How far in the past ``as_of`` must be for its answer to be taken as final (clock skew).
SETTLED = 60.0


def immutable(params: Iterable[Tuple[str, str]]) -> bool:
    """True when the query is pinned to an instant safely in the past (``as_of``)."""
    for k, v in params:
        if k != "as_of":
            continue
        try:
            at = _dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            return False
        if at.tzinfo is None:
            return False
        return (_dt.datetime.now(_dt.timezone.utc) - at).total_seconds() >= SETTLED
    return False


class DiskCache:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        os.makedirs(directory, exist_ok=True)

    def _path(self, url: str) -> str:
        return os.path.join(self.directory, hashlib.sha256(url.encode("utf-8")).hexdigest())

    def get(self, url: str) -> Optional[Tuple[Dict[str, str], bytes, bool]]:
        """(headers, body, immutable) of a cached answer, or None."""
        p = self._path(url)
        try:
            with open(p + ".json", "r", encoding="utf-8") as f:
                meta = json.load(f)
            with open(p + ".body", "rb") as f:
                body = f.read()
        except (OSError, ValueError):
            return None
        return dict(meta["headers"]), body, bool(meta["immutable"])

    def put(self, url: str, headers: Dict[str, str], body: bytes, immutable: bool) -> None:
        p = self._path(url)
        # Body first, then its description, each written whole: a reader never sees half a file.
        for suffix, data in (
            (".body", body),
            (".json", json.dumps({"url": url, "headers": headers, "immutable": immutable}).encode("utf-8")),
        ):
            fd, tmp = tempfile.mkstemp(dir=self.directory)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, p + suffix)
