// conformance/counter (GAMES.md): two seats add numbers to a shared total,
// one simultaneous window per round, for a fixed number of rounds.

import { levelInteger } from "./lib/levels.mjs";
import { canAct, simultaneous } from "./lib/views.mjs";

const GAME_ID = "conformance/counter";
const SEATS = ["a", "b"];
// Keeps every counter a safe integer however long the level is.
const MAX_ROUNDS = 2 ** 40;

function viewOf(state) {
  return {
    status: state.round >= state.rounds ? "ended" : "playing",
    participation: simultaneous(SEATS),
    round: state.round,
    total: state.total,
  };
}

const reducer = {
  init(level, _seed) {
    const rounds = levelInteger(level, "rounds", GAME_ID, 0, MAX_ROUNDS);
    return { rounds, round: 0, total: 0, actionsUsed: 0 };
  },

  // A plain JavaScript sum: a total past 2^53 is not refused here but by the
  // kernel, as an out-of-domain view (`invalid_view`).
  advance(state, inputs) {
    for (const input of inputs) {
      if (typeof input.index === "number") state.total += input.index;
    }
    state.round += 1;
    state.actionsUsed += inputs.length;
    return state;
  },

  view: viewOf,

  viewFor(state, seat) {
    return { ...viewOf(state), seat };
  },

  replayMetrics(state) {
    return { actionsUsed: state.actionsUsed };
  },
};

export default {
  game: { id: GAME_ID, version: "1", adapter: { id: `${GAME_ID}/reducer`, version: "1" } },
  description: "Two seats add numbers to a shared total, simultaneously, for a fixed number of rounds.",
  seats: SEATS,
  levels: [
    { id: "default", level: { rounds: 3 } },
    { id: "long", level: { rounds: 6 } },
  ],
  cadence: { mode: "turns" },
  reducer,

  // `{n: k}` adds k to the total.
  commandToAction(command, ctx) {
    if (typeof command?.n !== "number") {
      throw new TypeError(`${GAME_ID}: a command must be an object like {"n": 1}`);
    }
    return { id: "Action 1", index: command.n, seat: ctx.participantId };
  },

  legalActions(view, seat) {
    return canAct(view, seat) ? [0, 1, 2, 3].map((n) => ({ n })) : [];
  },
};
