#!/usr/bin/env python3
"""A GAOS process agent: the highest card in conformance/hilo, else the first legal action."""
import json
import sys


def answer(message):
    print(json.dumps(message), flush=True)  # one line per answer; stdout is the protocol


for line in sys.stdin:  # one JSON message per line
    message = json.loads(line)
    if message["type"] == "start":
        print(f"playing {message['game']} as {message['seat']}, seed {message['seed']}", file=sys.stderr)
    elif message["type"] == "decide":
        hand = message["observation"].get("hand")  # hilo: this seat's own cards only
        answer({"command": {"card": hand.index(max(hand))}} if hand else {"index": 0})
    elif message["type"] == "refused":
        print(f"refused ({message['code']}): {message['message']}", file=sys.stderr)
    elif message["type"] == "end":
        print(f"game over: {json.dumps(message['outcome'])}", file=sys.stderr)
