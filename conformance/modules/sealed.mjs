// conformance/sealed (GAMES.md): a sealed-bid auction over commit–reveal
// (gaos.commit.sha256.v1): both seats commit, then both reveal.

import { levelInteger } from "./lib/levels.mjs";
import { decidedByScore, ongoing, simultaneous } from "./lib/views.mjs";

const GAME_ID = "conformance/sealed";
// Game order, which is also code-point order.
const SEATS = ["north", "south"];
const COMMIT_SCHEME = "gaos.commit.sha256.v1";
const PHASES = ["commit", "reveal", "done"];

function viewOf(state) {
  const ended = state.round >= 2;
  return {
    status: ended ? "ended" : "playing",
    participation: simultaneous(SEATS),
    outcome: ended ? decidedByScore({ north: state.bids.north ?? 0, south: state.bids.south ?? 0 }) : ongoing(),
    phase: PHASES[Math.min(state.round, 2)],
    round: state.round,
    committed: [...state.committed],
    bids: { ...state.bids },
  };
}

const reducer = {
  init(level, _seed) {
    const maxBid = levelInteger(level, "maxBid", GAME_ID, 0, Number.MAX_SAFE_INTEGER);
    return { maxBid, round: 0, committed: [], bids: {}, actionsUsed: 0 };
  },

  advance(state, inputs) {
    const seats = inputs.map((input) => input.seat).sort();
    if (seats.length !== 2 || seats[0] !== "north" || seats[1] !== "south") {
      throw new Error(`${GAME_ID}: a window needs exactly one input from north and one from south, got seats ${JSON.stringify(seats)}`);
    }
    if (state.round === 0) {
      state.committed = [...SEATS];
    } else if (state.round === 1) {
      // The kernel verified each reveal against its commitment; a bid out of
      // range, or no verified payload at all (a forced input), counts as 0.
      for (const input of inputs) {
        const bid = input.verifiedPayload?.bid;
        state.bids[input.seat] = Number.isInteger(bid) && bid >= 0 && bid <= state.maxBid ? bid : 0;
      }
    } else {
      throw new Error(`${GAME_ID}: the auction is already settled`);
    }
    state.round += 1;
    state.actionsUsed += 2;
    return state;
  },

  view: viewOf,

  validateCommand(state, _seat, action) {
    if (action.id !== "Action 1") {
      throw new Error(`${GAME_ID}: that is not a move of sealed: commit {"commit": HASH}, then reveal {"reveal": {"salt": SALT, "bid": N}}`);
    }
    if (state.round === 0 && action.commit === undefined) throw new Error(`${GAME_ID}: the commit phase needs a commitment`);
    if (state.round === 1 && action.reveal === undefined) throw new Error(`${GAME_ID}: the reveal phase needs a reveal`);
    if (state.round >= 2) throw new Error(`${GAME_ID}: the auction is already settled`);
  },

  replayMetrics(state) {
    return { actionsUsed: state.actionsUsed };
  },
};

export default {
  game: { id: GAME_ID, version: "1", adapter: { id: `${GAME_ID}/reducer`, version: "1" } },
  description: "A sealed-bid auction: both seats commit to a bid, then reveal it; the higher bid wins.",
  seats: SEATS,
  levels: [{ id: "default", level: { maxBid: 100 } }],
  cadence: { mode: "turns" },
  reducer,

  // `{commit: HASH}` commits and `{reveal: {salt, bid}}` reveals the seat's
  // commitment 0. The hash and the salt are copied as given: a malformed
  // one is the kernel's envelope check to refuse (SCRIPT-FORMAT.md §4).
  commandToAction(command, ctx) {
    const seat = ctx.participantId;
    const commits = Object.hasOwn(command, "commit");
    const reveals = Object.hasOwn(command, "reveal");
    if (commits && reveals) throw new Error(`${GAME_ID}: a command either commits or reveals, not both`);
    if (commits) {
      return { id: "Action 1", seat, commit: { commitmentId: 0, scheme: COMMIT_SCHEME, hash: command.commit } };
    }
    if (reveals) {
      const { salt, bid } = command.reveal;
      return { id: "Action 1", seat, reveal: { commitmentId: 0, salt, payload: { bid } } };
    }
    throw new Error(`${GAME_ID}: a command must be {"commit": HASH} or {"reveal": {"salt": SALT, "bid": N}}`);
  },

  // No command can be derived from the view: a commitment needs the
  // client's secret salt and the session binding, and so does its reveal.
  legalActions(_view, _seat) {
    return [];
  },
};
