// conformance/counter (GAMES.md) as a game module: two seats add numbers to
// a shared total, simultaneously, for `rounds` rounds.
const SEATS = ["a", "b"];

function view(state) {
  return {
    status: state.round >= state.rounds ? "ended" : "playing",
    participation: { mode: "simultaneous", seats: SEATS },
    round: state.round,
    total: state.total,
  };
}

export const reducer = {
  init(level, _seed) {
    return { rounds: level.rounds, round: 0, total: 0, actionsUsed: 0 };
  },
  advance(state, inputs) {
    for (const input of inputs) state.total += input.index ?? 0;
    state.round += 1;
    state.actionsUsed += inputs.length;
    return state;
  },
  view,
  viewFor(state, seat) {
    return { ...view(state), seat };
  },
  replayMetrics(state) {
    return { actionsUsed: state.actionsUsed };
  },
};

export default {
  game: { id: "conformance/counter", version: "1", adapter: { id: "conformance/counter/reducer", version: "1" } },
  description: "Two seats add numbers to a shared total, simultaneously, for a fixed number of rounds.",
  seats: SEATS,
  levels: [
    { id: "default", level: { rounds: 3 } },
    { id: "long", level: { rounds: 6 } },
  ],
  cadence: { mode: "turns" },
  reducer,
  commandToAction(command, ctx) {
    if (typeof command !== "object" || command === null || !Number.isInteger(command.n)) {
      throw new TypeError('a counter command is {"n": <integer>}');
    }
    return { id: "Action 1", index: command.n, seat: ctx.participantId };
  },
  legalActions(_view, _seat) {
    return [{ n: 1 }, { n: 2 }];
  },
};
