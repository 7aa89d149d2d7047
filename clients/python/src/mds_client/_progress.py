"""Progress bars for long pulls and pushes: tqdm when it is installed, nothing otherwise.

A bar appears only once its work has taken ``DELAY`` seconds (tqdm's ``delay``), so quick
calls print nothing; it writes to stderr and is removed when done.
"""

from __future__ import annotations

from typing import Any, Optional

#: Seconds before a bar is shown.
DELAY = 2.0


class _Silent:
    """tqdm's part of a bar that the client uses, doing nothing."""

    def __init__(self, total: Optional[int] = None) -> None:
        # Read and set by the JSON paging (client.py), which learns the total from the first page.
        self.total = total

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "_Silent":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


def bar(enabled: Optional[bool], total: Optional[int], desc: str, unit: str) -> Any:
    """A tqdm bar (``enabled`` None: when tqdm is installed; False: never), or a silent one."""
    if enabled is False:
        return _Silent(total)
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if enabled:
            raise ImportError("progress=True needs tqdm: pip install 'mds-client[progress]'") from None
        return _Silent(total)
    return tqdm(total=total, desc=desc, unit=unit, delay=DELAY, leave=False, unit_scale=True)
