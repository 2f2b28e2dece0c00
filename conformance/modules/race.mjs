// conformance/race (GAMES.md): two seats advance along a course every tick;
// an input that does not coast moves its seat one extra cell.

import { levelInteger } from "./lib/levels.mjs";
import { canAct, decidedByScore, ongoing, simultaneous } from "./lib/views.mjs";

const GAME_ID = "conformance/race";
const SEATS = ["p1", "p2"];
// Every view lists every cell, so the course is bounded.
const MAX_LENGTH = 10000;

function cellName(index) {
  return `cell-${String(index).padStart(2, "0")}`;
}

function viewOf(state) {
  const ended = SEATS.some((seat) => state.pos[seat] >= state.length);
  const course = {};
  for (let i = 0; i < state.length; i += 1) {
    course[cellName(i)] = i === 0 ? "start" : i === state.length - 1 ? "finish" : "track";
  }
  return {
    status: ended ? "ended" : "playing",
    participation: simultaneous(SEATS),
    outcome: ended ? decidedByScore(state.pos) : ongoing(),
    pos: { ...state.pos },
    tick: state.tick,
    course,
  };
}

const reducer = {
  init(level, _seed) {
    const length = levelInteger(level, "length", GAME_ID, 0, MAX_LENGTH);
    return { length, pos: { p1: 0, p2: 0 }, tick: 0, actionsUsed: 0 };
  },

  // Windows may resolve with 0, 1 or 2 inputs (ticks cadence): everyone
  // moves one cell, and each input that does not coast one more.
  advance(state, inputs) {
    for (const seat of SEATS) state.pos[seat] += 1;
    for (const input of inputs) {
      if (input.payload?.coast === true) continue;
      if (!SEATS.includes(input.seat)) throw new Error(`${GAME_ID}: input from unknown seat ${JSON.stringify(input.seat)}`);
      state.pos[input.seat] += 1;
    }
    state.tick += 1;
    state.actionsUsed += inputs.length;
    return state;
  },

  view: viewOf,

  validateCommand(_state, _seat, action) {
    if (action.id !== "Action 1") {
      throw new Error(`${GAME_ID}: that is not a move of race: every command is a boost`);
    }
  },

  replayMetrics(state) {
    return { actionsUsed: state.actionsUsed };
  },
};

export default {
  game: { id: GAME_ID, version: "1", adapter: { id: `${GAME_ID}/reducer`, version: "1" } },
  description: "Two seats race along a course every tick; submitting an input moves a seat one extra cell.",
  seats: SEATS,
  levels: [
    { id: "default", level: { length: 12 } },
    { id: "sprint", level: { length: 5 } },
  ],
  cadence: { mode: "ticks", ticksPerSecond: 10 },
  reducer,

  // Any command boosts: its content is not read.
  commandToAction(_command, ctx) {
    return { id: "Action 1", seat: ctx.participantId };
  },

  // A timed-out seat coasts; window-wide timeouts need a forced input.
  timeoutToAction(ctx) {
    if (typeof ctx.participantId !== "string") {
      throw new TypeError(`${GAME_ID}: the timeout mapper only handles a named seat; window-wide timeouts need a forced input`);
    }
    return { id: "Action 1", payload: { coast: true }, seat: ctx.participantId };
  },

  // Only a boost: a submitted {"coast": true} would boost too (the mapper
  // ignores the content), so it is not offered.
  legalActions(view, seat) {
    return canAct(view, seat) ? [{ boost: true }] : [];
  },
};
