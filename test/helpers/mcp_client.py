"""The Python `mcp` package's client against a live /mcp (test/mcp-python.test.ts).

Usage: mcp_client.py <base url> <query key> <json list of [tool, arguments]>
Prints one JSON object: the tool names, then each call's structured content, or its error text.
"""

import asyncio
import contextlib
import json
import sys

from mcp import ClientSession

try:  # mcp >= 1.24 / 2.x
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    @contextlib.asynccontextmanager
    async def connect(url, headers):
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                yield streams

except ImportError:  # older 1.x
    from mcp.client.streamable_http import streamablehttp_client

    def connect(url, headers):
        return streamablehttp_client(url, headers=headers)


async def main(base, key, calls):
    out = {"tools": [], "calls": []}
    async with connect(base + "/mcp", {"Authorization": "Bearer " + key}) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await session.initialize()
            out["tools"] = [t.name for t in (await session.list_tools()).tools]
            for name, arguments in calls:
                r = await session.call_tool(name, arguments)
                # 2.x names the fields in snake_case, 1.x in camelCase.
                is_error = getattr(r, "is_error", None) or getattr(r, "isError", None)
                structured = getattr(r, "structured_content", None) or getattr(r, "structuredContent", None)
                if is_error:
                    out["calls"].append({"error": r.content[0].text})
                else:
                    out["calls"].append({"structured": structured, "text": r.content[0].text})
    print(json.dumps(out))


asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
