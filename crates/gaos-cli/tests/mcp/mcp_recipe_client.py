#!/usr/bin/env python3
"""The official Python MCP SDK (PyPI `mcp`) drives the agent-CLI recipe tools.

Recipes written for the reference's `gaos-agent spawn` call `observe {}`,
`act {"action": {...}}`, `reset {"seed"?}` and `transcript {}`
(spec/lifecycle.md §6). This client plays a whole conformance/hilo match
with only those tools, one MCP client per seat, over stdio (`gaos mcp`
children) or over the host's streamable-HTTP `/mcp` mount, and checks:

- the tool list holds the four recipe tools and act's schema takes `action`;
- both seats play right after create with their seat tokens only (the create
  took no claim);
- bad input is a tool error naming the problem that changes nothing:
  `action` that is not an object, `action` beside `index`, a seed out of
  range, an argument `transcript` does not take;
- `reset` is refused with `reset_not_allowed` (a host session plays one
  episode), saying how to get a fresh game;
- on a run created with `"advanceOn": "reset"`, `reset` is refused while a
  level plays (`level_in_play`), with a seed (`reset_seed_fixed`) and after
  the last level (`run_over`), and otherwise starts the next level;
- `transcript` lists exactly the decisions the seat sent, in order, with
  their cursors, and reports the end of the game.

Run by crates/gaos-cli/tests/mcp_recipe_tools.rs:

    python3 mcp_recipe_client.py stdio|http

Exits 0 when every check holds, 1 with the first failure otherwise.
"""

import asyncio
import json
import os
import re
import sys
from contextlib import AsyncExitStack

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

RECIPE_TOOLS = ["observe", "act", "reset", "transcript"]
TIMEOUT_S = 120


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


# What a tool error must not show a person (crates/gaos-testkit/src/words.rs
# checks the same in the Rust tests): action ids, Rust debug output, type names.
INTERNAL_NAMES = re.compile(r"Action \d|Some\(|\bNone\b|\bOk\(|\bErr\(|expected (?:struct|enum) ")


def check_users_words(context, text):
    found = INTERNAL_NAMES.search(text)
    check(found is None, f"{context}: the message shows the internal name {found and found.group(0)!r} to a person:\n{text}")


def env(name):
    value = os.environ.get(name)
    if not value:
        raise Failure(f"{name} is not set (the Rust test driver sets it)")
    return value


class Seat:
    def __init__(self, name, session):
        self.name = name
        self.session = session
        self.sent = []

    async def call(self, tool, arguments):
        result = await self.session.call_tool(tool, arguments)
        text = "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")
        data = result.structured_content or {}
        check(text.strip() != "", f"{self.name} {tool}: every result carries text a model can read")
        return bool(result.is_error), text, data

    async def ok(self, tool, arguments):
        is_error, text, data = await self.call(tool, arguments)
        check(not is_error, f"{self.name} {tool} {arguments}: unexpected tool error:\n{text}")
        return text, data

    async def refused(self, tool, arguments, code):
        _, before = await self.ok("observe", {})
        is_error, text, data = await self.call(tool, arguments)
        check(is_error, f"{self.name} {tool} {arguments}: expected a tool error {code}, got:\n{text}")
        check(data.get("code") == code, f"{self.name} {tool} {arguments}: code {data.get('code')!r}, not {code!r}")
        check_users_words(f"{self.name} {tool} {arguments}", text)
        _, after = await self.ok("observe", {})
        check(before == after, f"{self.name} {tool} {arguments} changed the game:\n{before}\n{after}")
        return text

    async def play_first_legal(self):
        _, seen = await self.ok("observe", {})
        check(seen["turn"] == "yours", f"{self.name} may move: {seen}")
        action = seen["legalActions"][0]
        check(isinstance(action, dict), f"legal actions are objects: {seen['legalActions']}")
        _, answer = await self.ok("act", {"action": action})
        self.sent.append((action, seen["revision"]))
        return answer


async def connect(stack, transport, seat, token, session_id=None):
    url = env("GAOS_URL")
    if transport == "stdio":
        args = ["mcp", "--host", url, "--session", session_id or env("GAOS_SESSION"), "--seat", seat]
        params = StdioServerParameters(command=env("GAOS_BIN"), args=args, env={"GAOS_SEAT_TOKEN": token, "RUST_LOG": "warn"})
        streams = await stack.enter_async_context(stdio_client(params))
    else:
        http = await stack.enter_async_context(create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
        streams = await stack.enter_async_context(streamable_http_client(f"{url}/mcp", http_client=http))
    session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
    await session.initialize()
    return Seat(seat, session)


async def play(transport):
    rounds = int(env("GAOS_ROUNDS"))
    async with AsyncExitStack() as stack:
        alice = await connect(stack, transport, "alice", env("GAOS_ALICE_TOKEN"))
        bob = await connect(stack, transport, "bob", env("GAOS_BOB_TOKEN"))

        listed = (await alice.session.list_tools()).tools
        names = [t.name for t in listed]
        check(all(name in names for name in RECIPE_TOOLS), f"the recipe tools are listed: {names}")
        act_schema = next(t for t in listed if t.name == "act").input_schema
        check("action" in act_schema.get("properties", {}), f"act takes an action: {act_schema}")
        reset_schema = next(t for t in listed if t.name == "reset").input_schema
        check("seed" in reset_schema.get("properties", {}), f"reset takes a seed: {reset_schema}")

        # Bad input changes nothing and names the problem.
        await alice.refused("act", {"action": 5}, "invalid_argument")
        await alice.refused("act", {"action": {"card": 0}, "index": 0}, "invalid_argument")
        await alice.refused("act", {"action": {"fold": True}}, "illegal_command")
        await alice.refused("reset", {"seed": -1}, "invalid_argument")
        await alice.refused("reset", {"seed": 2 ** 32}, "invalid_argument")
        await alice.refused("transcript", {"verbose": True}, "invalid_argument")
        # One episode per host session: reset says how to get a fresh game.
        for arguments in ({}, {"seed": 3}):
            text = await alice.refused("reset", arguments, "reset_not_allowed")
            check("new session" in text, f"reset says what to do: {text}")

        for _ in range(rounds):
            await alice.play_first_legal()
            await bob.play_first_legal()

        for seat in (alice, bob):
            text, data = await seat.ok("transcript", {})
            decisions = data["decisions"]
            check(len(decisions) == rounds + (1 if seat is alice else 0),
                  f"{seat.name}: every decision sent is in the transcript: {decisions}")
            accepted = [d for d in decisions if d["accepted"]]
            check([(d["action"], d["revision"]) for d in accepted] == seat.sent,
                  f"{seat.name}: the transcript lists the sent actions at their cursors: {accepted} vs {seat.sent}")
            check([d["step"] for d in decisions] == list(range(len(decisions))), f"steps count up: {decisions}")
            check(data["gameOver"] is True, f"{seat.name}: the transcript reports the end: {data}")
            check(f"{len(decisions)} decisions" in text, f"the text counts the decisions: {text}")
        refused = [d for d in (await alice.ok("transcript", {}))[1]["decisions"] if not d["accepted"]]
        check([d.get("code") for d in refused] == ["illegal_command"], f"the refused act is on record: {refused}")
        await alice.ok("finalize", {})
        await play_run(stack, transport)
        print(f"{transport}: {rounds} rounds through the recipe tools")


async def play_run(stack, transport):
    """A two-level run that advances on reset, one move per seat per level."""
    run = env("GAOS_RUN_SESSION")
    alice = await connect(stack, transport, "alice", env("GAOS_RUN_ALICE_TOKEN"), run)
    bob = await connect(stack, transport, "bob", env("GAOS_RUN_BOB_TOKEN"), run)
    await alice.refused("reset", {}, "level_in_play")
    await alice.play_first_legal()
    await bob.play_first_legal()
    text, seen = await alice.ok("observe", {})
    check(seen.get("awaitingReset") is True and "Call reset" in text, f"an ended level offers reset: {text} {seen}")
    await alice.refused("reset", {"seed": 3}, "reset_seed_fixed")
    text, _ = await alice.ok("reset", {})
    check("level 1" in text, f"reset names the level it started: {text}")
    for seat in (alice, bob):
        _, seen = await seat.ok("observe", {})
        check(seen["turn"] == "yours", f"{seat.name} plays the new level: {seen}")
        await seat.play_first_legal()
    _, seen = await bob.ok("observe", {})
    check(seen.get("awaitingReset") is False, f"the last level offers no reset: {seen}")
    await bob.refused("reset", {}, "run_over")
    await alice.ok("finalize", {})


def main():
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    try:
        asyncio.run(asyncio.wait_for(play(transport), TIMEOUT_S))
    except Failure as failure:
        print(f"FAILED over {transport}: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
