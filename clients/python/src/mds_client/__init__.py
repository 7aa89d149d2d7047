"""mds_client: the Python client of market-data-service.

Read any dataset into a pandas or polars DataFrame (JSON pages with ``cursor``, or one Arrow /
Parquet download), and push rows as schema-3.0 ingest batches with idempotency keys, the
checksum and content-derived batch ids. Only the standard library is required; pandas, polars
and pyarrow are optional extras (``pip install 'mds-client[all]'``).

    >>> from mds_client import Client
    >>> client = Client("http://localhost:8080", "mds_q_…")
    >>> df = client.get("etf/kline", code="510300", date_from="2024-01-01")
"""

from .client import Client
from .errors import (
    AuthError,
    BadRequest,
    BatchRejected,
    Conflict,
    InvalidRows,
    MdsError,
    MissingFactors,
    NotFound,
    QuotaExceeded,
    RateLimited,
    ServerError,
)
from .schema import DatasetInfo, Field

__all__ = [
    "Client",
    "DatasetInfo",
    "Field",
    "MdsError",
    "BadRequest",
    "AuthError",
    "RateLimited",
    "QuotaExceeded",
    "NotFound",
    "Conflict",
    "ServerError",
    "InvalidRows",
    "BatchRejected",
    "MissingFactors",
]
__version__ = "0.1.0"
