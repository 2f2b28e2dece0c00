#!/usr/bin/env python3
"""A real MCP client that is not ours plays conformance/hilo against `gaos serve`.

The official Python MCP SDK (PyPI `mcp`) connects one client per seat, over
stdio (`gaos mcp` child processes) or over streamable HTTP (the host's
`/mcp` mount, seat token as bearer), and plays a full match through the
seat tools. On the way it checks:

- the tool list and the act schema;
- bad tool input (unknown action, wrong parameter types, malformed tool
  arguments, acting out of turn, acting after finalize) is an MCP tool error
  (isError) naming the problem, and changes nothing;
- a forced lease lapse mid-game (the host's test clock jumps past both
  leases) that `act` recovers from transparently, renewing the same claims;
- a deliberate pause blocks acting until resume;
- the information boundary: no result for one seat ever shows a card the
  other seat still holds;
- finalize from both seats answers one result; the replay is written out for
  the Rust driver to verify with `gaos replay verify`.

Run by crates/gaos-cli/tests/mcp_python_client.rs, which starts the host,
creates the session and passes everything through the environment:

    python3 mcp_hilo_client.py stdio|http

Exits 0 when every check holds, 1 with the first failure otherwise.
"""

import asyncio
import json
import os
import re
import sys
import urllib.request
from contextlib import AsyncExitStack

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

TOOLS = ["observe", "act", "pause", "resume", "status", "finalize", "replay", "reset", "transcript"]
LAPSE_ROUND = 1
PAUSE_ROUND = 3
TIMEOUT_S = 150


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


def history_cards(data):
    """Cards a result shows in the public history (played cards)."""
    cards = set()
    for view in (data.get("view"), (data.get("observation") or {}).get("view")):
        for played in (view or {}).get("history") or []:
            cards.update(card for card in (played.get("alice"), played.get("bob")) if card is not None)
    return cards


class Match:
    """What the driver knows: the deal and every card played so far."""

    def __init__(self, hands):
        self.hands = hands
        self.played = set()
        self.calls = 0


class Seat:
    def __init__(self, name, other, session, match):
        self.name = name
        self.other = other
        self.session = session
        self.match = match

    async def call(self, tool, arguments=None):
        result = await self.session.call_tool(tool, arguments or {})
        self.match.calls += 1
        text = "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")
        data = result.structured_content or {}
        check(isinstance(data, dict), f"{self.name} {tool}: structured content is a JSON object: {data!r}")
        check(text.strip() != "", f"{self.name} {tool}: every result carries text a model can read")
        self.check_boundary(tool, text, data)
        return bool(result.is_error), text, data

    def check_boundary(self, tool, text, data):
        everything = text + "\n" + json.dumps(data)
        public = history_cards(data)
        self.match.played |= public
        hidden = [c for c in self.match.hands[self.other] if c not in self.match.played]
        for card in hidden:
            leaked = re.search(rf"(?<![0-9A-Za-z]){card}(?![0-9A-Za-z])", everything)
            check(not leaked, f"{self.name} {tool}: the result shows {self.other}'s hidden card {card}:\n{everything}")
        check('"hands"' not in everything, f"{self.name} {tool}: the result carries the full state:\n{everything}")

    async def ok(self, tool, arguments=None):
        is_error, text, data = await self.call(tool, arguments)
        check(not is_error, f"{self.name} {tool} {arguments}: unexpected tool error:\n{text}")
        return text, data

    async def refused(self, tool, arguments, code):
        """A tool error with `code` that changed nothing the seat can see."""
        _, before = await self.ok("observe")
        is_error, text, data = await self.call(tool, arguments)
        check(is_error, f"{self.name} {tool} {arguments}: expected a tool error {code}, got:\n{text}")
        check(data.get("code") == code, f"{self.name} {tool} {arguments}: code {data.get('code')!r}, not {code!r}:\n{text}")
        check(text.startswith(f"error [{code}]: "), f"{self.name} {tool}: the text names the problem:\n{text}")
        check(data.get("error"), f"{self.name} {tool}: the error carries the host's message: {data}")
        check_users_words(f"{self.name} {tool} {arguments}", text)
        _, after = await self.ok("observe")
        check(before == after, f"{self.name} {tool} {arguments} changed the game:\n{before}\n{after}")
        return text


async def connect(stack, transport, seat, token, lease_token=None, lease_ms=None):
    url = env("GAOS_URL")
    if transport == "stdio":
        args = ["mcp", "--host", url, "--session", env("GAOS_SESSION"), "--seat", seat]
        server_env = {"GAOS_SEAT_TOKEN": token, "RUST_LOG": "warn"}
        if lease_token:
            server_env["GAOS_LEASE_TOKEN"] = lease_token
        if lease_ms:
            args += ["--lease-ms", str(lease_ms)]
        params = StdioServerParameters(command=env("GAOS_BIN"), args=args, env=server_env)
        streams = await stack.enter_async_context(stdio_client(params))
    else:
        headers = {"Authorization": f"Bearer {token}"}
        if lease_token:
            headers["Gaos-Lease"] = lease_token
        if lease_ms:
            headers["Gaos-Lease-Ms"] = str(lease_ms)
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        streams = await stack.enter_async_context(streamable_http_client(f"{url}/mcp", http_client=http))
    session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
    await session.initialize()
    return session


def advance_clock(ms):
    request = urllib.request.Request(
        env("GAOS_URL") + "/v1/admin/clock",
        data=json.dumps({"advanceMs": ms}).encode(),
        headers={"Authorization": f"Bearer {env('GAOS_OPERATOR_TOKEN')}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        check(response.status == 200, f"POST /v1/admin/clock answered {response.status}")


async def wait_for_lease(seat, state):
    for _ in range(250):
        _, data = await seat.ok("status")
        if data["lease"].get("state") == state:
            return data
        await asyncio.sleep(0.02)
    raise Failure(f"{seat.name}'s lease never became {state}")


async def play(transport):
    hands = json.loads(env("GAOS_HANDS"))
    match = Match(hands)
    rounds = len(hands["alice"])
    async with AsyncExitStack() as stack:
        alice = Seat("alice", "bob", await connect(
            stack, transport, "alice", env("GAOS_ALICE_TOKEN"), lease_token=env("GAOS_ALICE_LEASE")), match)
        bob = Seat("bob", "alice", await connect(
            stack, transport, "bob", env("GAOS_BOB_TOKEN"), lease_ms=int(env("GAOS_LEASE_MS"))), match)

        listed = await alice.session.list_tools()
        check([t.name for t in listed.tools] == TOOLS, f"the tool list: {[t.name for t in listed.tools]}")
        act_schema = next(t for t in listed.tools if t.name == "act").input_schema
        check({"command", "index"} <= set(act_schema.get("properties", {})), f"act's schema: {act_schema}")

        # The seats' claims: alice drives the creator's (handed over), bob his own.
        _, status_a = await alice.ok("status")
        check(status_a["lease"].get("holderId") == "creator", f"alice adopted the creator's claim: {status_a}")
        _, status_b = await bob.ok("status")
        check(status_b["lease"].get("state") == "active", f"bob holds a live claim: {status_b}")
        epochs = {"alice": status_a["lease"]["epoch"], "bob": status_b["lease"]["epoch"]}

        _, seen = await alice.ok("observe")
        check(seen["view"]["hand"] == hands["alice"], f"alice sees her dealt hand: {seen['view']}")
        check(seen["turn"] == "yours", f"alice may move: {seen}")

        # Bad input: a tool error naming the problem, and nothing changes.
        await alice.refused("act", {"command": {"fold": True}}, "illegal_command")  # unknown action
        await alice.refused("act", {"command": {"card": "two"}}, "illegal_command")  # wrong parameter type
        await alice.refused("act", {"command": {"card": 99}}, "illegal_command")  # no such card
        await alice.refused("act", {"index": "two"}, "invalid_argument")  # wrong tool input type
        await alice.refused("act", {"index": 99}, "invalid_argument")  # outside the legal list
        await alice.refused("act", {"command": {"card": 0}, "index": 0}, "invalid_argument")
        await alice.refused("act", {}, "invalid_argument")
        await alice.refused("finalize", {}, "not_terminal")

        for round_no in range(rounds):
            _, seen = await alice.ok("observe", {"waitMs": 5000})
            check(seen["turn"] == "yours" and seen["view"]["round"] == round_no, f"round {round_no}: {seen}")
            if round_no == LAPSE_ROUND:
                # Both seats "think" longer than their leases: the claims lapse.
                await asyncio.to_thread(advance_clock, int(env("GAOS_ADVANCE_MS")))
                await wait_for_lease(alice, "lapsed")
                await wait_for_lease(bob, "lapsed")
            if round_no == PAUSE_ROUND:
                _, paused = await alice.ok("pause", {"reason": "double-checking the score"})
                check(paused["lease"].get("state") == "paused", f"pause: {paused}")
                await alice.refused("act", {"index": 0}, "session_paused")
                await alice.ok("resume")

            text, submitted = await alice.ok("act", {"index": 0})
            check(submitted["kind"] == "pending", f"alice's card waits for bob: {text}")
            if round_no == 0:
                # Acting out of turn: a second card in the same round.
                await alice.refused("act", {"command": {"card": 0}}, "conflicting_intent")

            _, seen = await bob.ok("observe")
            check(seen["turn"] == "yours", f"bob is awaited: {seen}")
            text, resolved = await bob.ok("act", {"command": seen["legalActions"][-1]})
            check(resolved["kind"] == "tick" and resolved["view"]["round"] == round_no + 1, f"the round resolves: {text}")

            if round_no == LAPSE_ROUND:
                # act renewed the very same claims (lease rule 8): same epochs.
                for seat in (alice, bob):
                    _, status = await seat.ok("status")
                    check(status["lease"].get("state") == "active", f"{seat.name} is active again: {status}")
                    check(status["lease"].get("epoch") == epochs[seat.name], f"{seat.name} kept its claim: {status}")

        _, over = await alice.ok("observe")
        check(over["turn"] == "over" and over["done"], f"the game is over: {over}")
        _, result_a = await alice.ok("finalize")
        _, result_b = await bob.ok("finalize")
        check(result_a == result_b, f"one result whoever finalizes:\n{result_a}\n{result_b}")
        check(result_a.get("status") == "finalized", f"finalize: {result_a}")
        await alice.refused("act", {"command": {"card": 0}}, "session_finalized")  # acting after finalize
        _, replay = await alice.ok("replay")
        check(replay["replay"].splitlines()[0].find("gaos.replay") >= 0, "the replay starts with its header")
        with open(env("GAOS_REPLAY_OUT"), "w", encoding="utf-8") as out:
            out.write(replay["replay"])
        check(match.played == set(hands["alice"]) | set(hands["bob"]), "every dealt card was played")
        print(f"mcp {transport}: {rounds} rounds, {match.calls} tool calls, lapse recovered, boundary held")


def first_failure(error):
    """The check that failed, also from inside (nested) exception groups."""
    if isinstance(error, Failure):
        return error
    for inner in getattr(error, "exceptions", None) or ():
        found = first_failure(inner)
        if found is not None:
            return found
    return None


def main():
    transport = sys.argv[1] if len(sys.argv) > 1 else ""
    if transport not in ("stdio", "http"):
        print("usage: mcp_hilo_client.py stdio|http", file=sys.stderr)
        return 2
    try:
        asyncio.run(asyncio.wait_for(play(transport), TIMEOUT_S))
    except BaseException as error:  # the SDK's task groups wrap failures in exception groups
        failure = first_failure(error)
        if failure is None:
            raise
        print(f"FAILED ({transport}): {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
