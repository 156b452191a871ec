"""A misbehaving MCP server (stdio) for the daemon's tests: crashes, hangs and big results.

Written with the official Python SDK (`mcp`, pinned to 2.3.0). `tests/install-peers` puts that
SDK in a venv; tests run this file with its interpreter, found through
`pi_test_support::peers::{python, fault_server}`, as `PYTHON fault_server.py`.

Tools (all answer plain text content, no structured content):
  echo(text)          the text unchanged
  pid()               this process's id, so a test can tell a restarted server apart
  crash()             writes "crashing on request" to stderr and exits with code 3 mid-call,
                      never answering
  hang()              never answers (other calls keep being served)
  big(kilobytes)      at least that many KiB of numbered lines "line 000001\\n" (12 bytes each)
  flood(count, kilobytes)  COUNT progress notifications of KILOBYTES KiB each, as fast as it
                      can; answers "flooded COUNT"
  add_tool(name)      registers tool NAME (answering "hello from NAME") and sends
                      notifications/tools/list_changed; answers "added NAME"

Environment, read at start:
  FAULT_SERVER_COUNT_FILE=PATH   append "start <pid>" to PATH on every start (counts restarts)
  FAULT_SERVER_EXIT_AT_START=1   write "exiting at start" to stderr and exit with code 2 before
                                 reading anything (trips a restart circuit breaker)
  FAULT_SERVER_START_GATE=PATH   read nothing (not even the handshake) until PATH exists: a
                                 server that starts as slowly as the test wants
"""

import asyncio
import os
import sys
import time

if count_file := os.environ.get("FAULT_SERVER_COUNT_FILE"):
    with open(count_file, "a") as f:
        f.write(f"start {os.getpid()}\n")
if os.environ.get("FAULT_SERVER_EXIT_AT_START") == "1":
    sys.stderr.write("exiting at start\n")
    sys.stderr.flush()
    os._exit(2)
if gate := os.environ.get("FAULT_SERVER_START_GATE"):
    while not os.path.exists(gate):
        time.sleep(0.05)

# Imported after the start switches, which must act before the SDK loads.
from mcp.server import NotificationOptions  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402

server = MCPServer("fault-server", version="1")


def tool(fn):
    # Plain text results: by default 2.x also mirrors a `-> str` result as structuredContent.
    server.add_tool(fn, structured_output=False)
    return fn


@tool
def echo(text: str) -> str:
    """Returns the text unchanged."""
    return text


@tool
def pid() -> str:
    """Returns the server's process id."""
    return str(os.getpid())


@tool
def crash() -> str:
    """Exits the server process (code 3) without answering."""
    sys.stderr.write("crashing on request\n")
    sys.stderr.flush()
    os._exit(3)


@tool
async def hang() -> str:
    """Never answers."""
    await asyncio.Event().wait()
    return "unreachable"


@tool
def big(kilobytes: int) -> str:
    """Returns at least KILOBYTES KiB of numbered 12-byte lines."""
    lines = -(-kilobytes * 1024 // 12)
    return "".join(f"line {i:06d}\n" for i in range(1, lines + 1))


@tool
async def flood(count: int, kilobytes: int, ctx: Context) -> str:
    """Sends COUNT progress notifications of KILOBYTES KiB each as fast as it can."""
    filler = "x" * (kilobytes * 1024)
    for i in range(1, count + 1):
        await ctx.report_progress(i, count, f"{i:08d} {filler}")
    return f"flooded {count}"


@tool
async def add_tool(name: str, ctx: Context) -> str:
    """Registers a tool NAME and notifies the client that the tool list changed."""

    def added() -> str:
        return f"hello from {name}"

    server.add_tool(added, name=name, description=f"Added at run time by add_tool({name!r}).",
                    structured_output=False)
    # Handshake-era clients get the notification on the connection; 2026-07-28 clients get
    # it on their subscriptions/listen stream. Each path drops what its era does not use.
    await ctx.session.send_tool_list_changed()
    await ctx.notify_tools_changed()
    return f"added {name}"


async def main() -> None:
    # MCPServer.run() advertises tools.listChanged=false to handshake clients; the low-level
    # server takes the notification options (MCPServer has no public setter for them).
    lowlevel = server._lowlevel_server
    options = lowlevel.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, options)


if __name__ == "__main__":
    asyncio.run(main())
