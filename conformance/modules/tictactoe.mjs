// conformance/tictactoe (GAMES.md): sequential noughts and crosses from a
// given board; an x line wins with stars, an o line fails the level, a full
// board ends it.

import { mulberry32 } from "./lib/random.mjs";
import { canAct, ongoing } from "./lib/views.mjs";

const GAME_ID = "conformance/tictactoe";
const SEATS = ["x", "o"];
// The 3 rows, 3 columns and 2 diagonals.
const LINES = [
  [0, 1, 2],
  [3, 4, 5],
  [6, 7, 8],
  [0, 3, 6],
  [1, 4, 7],
  [2, 5, 8],
  [0, 4, 8],
  [2, 4, 6],
];

const other = (mark) => (mark === "x" ? "o" : "x");
const isPass = (action) => action.payload?.pass === true;
// Every command but {cell: c} with c in 0..8 maps to "Action 0", refused so.
const NOT_A_CELL = 'that is not a cell on the board: a move is {"cell": C} with C a free cell from 0 to 8';

/** The cell (0..8) of action id "Action 1".."Action 9", else null. */
function actionCell(id) {
  const match = typeof id === "string" ? /^Action ([1-9])$/.exec(id) : null;
  return match === null ? null : Number(match[1]) - 1;
}

function hasLine(board, mark) {
  return LINES.some((line) => line.every((cell) => board[cell] === mark));
}

function decided(ranking, reason) {
  return { kind: "decided", ranking, reason };
}

function viewOf(state) {
  const view = {
    status: "playing",
    participation: { mode: "sequential", activeSeat: state.toMove },
    outcome: ongoing(),
    board: state.board,
    toMove: state.toMove,
    moves: state.moves,
    passes: state.passes,
  };
  if (hasLine(state.board, "x")) {
    view.status = "won";
    view.stars = state.moves <= 5 ? 3 : state.moves <= 7 ? 2 : 1;
    view.outcome = decided([{ seat: "x", rank: 1 }, { seat: "o", rank: 2 }], "line");
  } else if (hasLine(state.board, "o")) {
    view.status = "failed";
    view.outcome = decided([{ seat: "o", rank: 1 }, { seat: "x", rank: 2 }], "line");
  } else if (!state.board.includes(".")) {
    view.status = "ended";
    view.outcome = decided([{ seat: "o", rank: 1 }, { seat: "x", rank: 1 }], "draw");
  }
  return view;
}

const reducer = {
  init(level, seed) {
    const board = level?.board;
    if (typeof board !== "string" || !/^[xo.]{9}$/.test(board)) {
      throw new TypeError(`${GAME_ID}: "board" must be 9 characters over x, o and '.', found ${JSON.stringify(board)}`);
    }
    const first = level.first;
    let toMove;
    if (first === "x" || first === "o") toMove = first;
    else if (first === "seed") toMove = mulberry32(seed)() < 0.5 ? "x" : "o";
    else throw new TypeError(`${GAME_ID}: "first" must be "x", "o" or "seed"`);
    return { board, toMove, moves: 0, passes: 0 };
  },

  advance(state, inputs) {
    if (inputs.length !== 1) throw new Error(`${GAME_ID}: a window takes exactly one input, got ${inputs.length}`);
    const [input] = inputs;
    const mover = state.toMove;
    if (input.seat !== mover) {
      const who = typeof input.seat === "string" ? `${input.seat}'s` : "a seatless input's";
      throw new Error(`${GAME_ID}: it is ${mover}'s turn, not ${who}`);
    }
    if (isPass(input)) {
      state.passes += 1;
    } else {
      const cell = actionCell(input.id);
      if (cell === null) throw new Error(`${GAME_ID}: ${NOT_A_CELL}`);
      if (state.board[cell] !== ".") throw new Error(`${GAME_ID}: cell ${cell} is taken`);
      state.board = state.board.slice(0, cell) + mover + state.board.slice(cell + 1);
    }
    state.toMove = other(mover);
    state.moves += 1;
    return state;
  },

  view: viewOf,

  validateCommand(state, seat, action) {
    if (seat !== state.toMove) throw new Error(`${GAME_ID}: it is ${state.toMove}'s turn, not ${seat}'s`);
    if (isPass(action)) return;
    const cell = actionCell(action.id);
    if (cell === null) throw new Error(`${GAME_ID}: ${NOT_A_CELL}`);
    if (state.board[cell] !== ".") throw new Error(`${GAME_ID}: cell ${cell} is taken: choose a free cell`);
  },

  replayMetrics(state) {
    return { actionsUsed: state.moves };
  },
};

export default {
  game: { id: GAME_ID, version: "1", adapter: { id: `${GAME_ID}/reducer`, version: "1" } },
  description: "Noughts and crosses in sequential windows; x wins with up to three stars, an o line fails.",
  seats: SEATS,
  levels: [
    { id: "default", level: { board: ".........", first: "x" } },
    { id: "seeded", level: { board: ".........", first: "seed" } },
  ],
  cadence: { mode: "turns" },
  reducer,

  // `{cell: c}` with c in 0..8 marks cell c; any other command becomes
  // "Action 0", which validateCommand refuses.
  commandToAction(command, ctx) {
    const cell = command?.cell;
    const id = Number.isInteger(cell) && cell >= 0 && cell <= 8 ? `Action ${cell + 1}` : "Action 0";
    return { id, seat: ctx.participantId };
  },

  // A timed-out seat passes; window-wide timeouts need a forced input.
  timeoutToAction(ctx) {
    if (typeof ctx.participantId !== "string") {
      throw new TypeError(`${GAME_ID}: the timeout mapper only handles a named seat; window-wide timeouts need a forced input`);
    }
    return { id: "Action 1", payload: { pass: true }, seat: ctx.participantId };
  },

  legalActions(view, seat) {
    if (!canAct(view, seat) || typeof view.board !== "string") return [];
    return [...view.board.slice(0, 9)].flatMap((mark, cell) => (mark === "." ? [{ cell }] : []));
  },
};
