// conformance/hilo (GAMES.md): two seats hold hidden hands dealt by an LCG
// and play one card each per simultaneous round; the higher card scores.

import { levelInteger } from "./lib/levels.mjs";
import { lcg } from "./lib/random.mjs";
import { canAct, decidedByScore, ongoing, simultaneous } from "./lib/views.mjs";

const GAME_ID = "conformance/hilo";
// Game order: alice is dealt first.
const SEATS = ["alice", "bob"];
// Hands are materialized, so their size is bounded.
const MAX_HAND_SIZE = 100000;

function holdsHand(state, seat) {
  return Object.hasOwn(state.hands, seat);
}

// Why an action's card cannot be played from a hand of `held` cards.
function notInHand(action, held) {
  const card = typeof action.index === "number" ? `card ${action.index}` : "no card";
  if (held === 0) return `${card} cannot be played: the hand is empty`;
  return `${card} is not in the hand: play a card from 0 to ${held - 1}`;
}

function viewOf(state) {
  const ended = state.round >= state.handSize;
  return {
    status: ended ? "ended" : "playing",
    participation: simultaneous(SEATS),
    outcome: ended ? decidedByScore(state.score) : ongoing(),
    round: state.round,
    score: { ...state.score },
    history: state.history.map((played) => ({ ...played })),
    handCounts: { alice: state.hands.alice.length, bob: state.hands.bob.length },
  };
}

const reducer = {
  init(level, seed) {
    const handSize = levelInteger(level, "handSize", GAME_ID, 0, MAX_HAND_SIZE);
    const maxCard = levelInteger(level, "maxCard", GAME_ID, 1, Number.MAX_SAFE_INTEGER);
    const next = lcg(seed);
    const deal = () => Array.from({ length: handSize }, () => 1 + (next() % maxCard));
    const alice = deal();
    const bob = deal();
    return {
      handSize,
      round: 0,
      hands: { alice, bob },
      score: { alice: 0, bob: 0 },
      history: [],
      actionsUsed: 0,
    };
  },

  advance(state, inputs) {
    const played = {};
    for (const input of inputs) {
      const seat = input.seat;
      if (!holdsHand(state, seat)) throw new Error(`${GAME_ID}: input from unknown seat ${JSON.stringify(seat)}`);
      if (Object.hasOwn(played, seat)) throw new Error(`${GAME_ID}: ${seat} played twice in one round`);
      const hand = state.hands[seat];
      if (!Number.isInteger(input.index) || input.index < 0 || input.index >= hand.length) {
        throw new RangeError(`${GAME_ID}: ${seat}: ${notInHand(input, hand.length)}`);
      }
      played[seat] = input.index;
    }
    if (!Object.hasOwn(played, "alice") || !Object.hasOwn(played, "bob")) {
      throw new Error(`${GAME_ID}: a round needs exactly one input per seat, got ${inputs.length}`);
    }
    const [alice] = state.hands.alice.splice(played.alice, 1);
    const [bob] = state.hands.bob.splice(played.bob, 1);
    const winner = alice > bob ? "alice" : bob > alice ? "bob" : null;
    if (winner !== null) state.score[winner] += 1;
    state.history.push({ alice, bob, winner });
    state.round += 1;
    state.actionsUsed += inputs.length;
    return state;
  },

  view: viewOf,

  // The shared view plus the seat's own cards (none for a seat without a hand).
  viewFor(state, seat) {
    return { ...viewOf(state), seat, hand: holdsHand(state, seat) ? [...state.hands[seat]] : [] };
  },

  validateCommand(state, seat, action) {
    if (action.id !== "Action 1") {
      throw new Error(`${GAME_ID}: that is not a move of hilo: play a card, {"card": i}`);
    }
    if (!holdsHand(state, seat)) throw new Error(`${GAME_ID}: seat ${seat} holds no hand`);
    const held = state.hands[seat].length;
    if (!Number.isInteger(action.index) || action.index < 0 || action.index >= held) {
      throw new RangeError(`${GAME_ID}: ${notInHand(action, held)}`);
    }
  },

  replayMetrics(state) {
    return { actionsUsed: state.actionsUsed };
  },
};

export default {
  game: { id: GAME_ID, version: "1", adapter: { id: `${GAME_ID}/reducer`, version: "1" } },
  description: "Two seats play one card from a hidden hand each round; the higher card scores.",
  seats: SEATS,
  levels: [
    { id: "default", level: { handSize: 3, maxCard: 9 } },
    { id: "long", level: { handSize: 4, maxCard: 13 } },
  ],
  cadence: { mode: "turns" },
  reducer,

  // `{card: i}` plays the card at index i of the seat's hand.
  commandToAction(command, ctx) {
    if (typeof command?.card !== "number") {
      throw new TypeError(`${GAME_ID}: a command must be an object like {"card": 0}`);
    }
    return { id: "Action 1", index: command.card, seat: ctx.participantId };
  },

  // A timed-out seat plays its first card; window-wide timeouts need a forced input.
  timeoutToAction(ctx) {
    if (typeof ctx.participantId !== "string") {
      throw new TypeError(`${GAME_ID}: the timeout mapper only handles a named seat; window-wide timeouts need a forced input`);
    }
    return { id: "Action 1", index: 0, seat: ctx.participantId };
  },

  legalActions(view, seat) {
    const held = Array.isArray(view.hand) ? view.hand.length : 0;
    return canAct(view, seat) ? Array.from({ length: held }, (_, card) => ({ card })) : [];
  },
};
