"""An opt-in disk cache of query answers (``Client(cache_dir=…)``).

An answer the service marks ``Cache-Control: … immutable`` (an ``as_of`` at or before the
dataset's last change: every later change is known after it, docs/point-in-time.md) is final:
it is served from disk without a request. Any other answer is revalidated: the request carries
the cached ETag as ``If-None-Match`` and a ``304`` means the cached body is still the answer
(the ETag changes exactly when a batch changes the dataset). Files are named by a hash of the
URL; the key is not part of it (every key sees the same data). Nothing is ever evicted: delete
the directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Dict, Mapping, Optional, Tuple


def immutable(headers: Mapping[str, str]) -> bool:
    """True when the service says the answer never changes (``Cache-Control: immutable``)."""
    return "immutable" in [d.strip().lower() for d in headers.get("cache-control", "").split(",")]


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
