#!/usr/bin/env python3
"""The official Python MCP client drives one seat of a signed hilo match.

It starts `gaos mcp --seat-key FILE` over stdio (the MCP server signs every
move it submits for its agent, RFC-010) and plays the seat to the end: each
round it waits for its turn and plays the first legal card. It checks that
every act is accepted and that the game ends. Run by
crates/gaos-cli/tests/signed_play_e2e.rs, which holds the other seat
through the Rust client and verifies the replay:

    GAOS_BIN=... GAOS_URL=... GAOS_SESSION=... GAOS_SEAT=bob GAOS_SEAT_TOKEN=... \
    GAOS_SEAT_KEY=bob.key python3 mcp_signed_seat.py
"""

import asyncio
import os
import sys
from contextlib import AsyncExitStack

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TIMEOUT_S = 120


class Failure(Exception):
    pass


def env(name):
    value = os.environ.get(name)
    if not value:
        raise Failure(f"{name} is not set (the Rust test driver sets it)")
    return value


async def play():
    seat = env("GAOS_SEAT")
    args = ["mcp", "--host", env("GAOS_URL"), "--session", env("GAOS_SESSION"), "--seat", seat,
            "--seat-key", env("GAOS_SEAT_KEY")]
    params = StdioServerParameters(command=env("GAOS_BIN"), args=args,
                                   env={"GAOS_SEAT_TOKEN": env("GAOS_SEAT_TOKEN"), "RUST_LOG": "warn"})
    moves = 0
    async with AsyncExitStack() as stack:
        streams = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
        await session.initialize()
        for _ in range(200):
            result = await session.call_tool("observe", {"waitMs": 5000})
            data = result.structured_content or {}
            if result.is_error:
                raise Failure(f"observe failed: {data}")
            if data.get("turn") == "over" or data.get("done"):
                break
            if data.get("turn") != "yours":
                continue
            acted = await session.call_tool("act", {"index": 0})
            if acted.is_error:
                raise Failure(f"{seat}'s signed act was refused: {acted.structured_content}")
            moves += 1
        else:
            raise Failure("the game did not end")
    if moves == 0:
        raise Failure(f"{seat} never moved")
    print(f"{seat}: {moves} signed moves through gaos mcp")


def main():
    try:
        asyncio.run(asyncio.wait_for(play(), TIMEOUT_S))
    except BaseException as error:  # the SDK's task groups wrap failures in exception groups
        print(f"FAILED: {error!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
