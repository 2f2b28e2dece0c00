// js/spin: two seats add numbers like conformance/counter, except that a
// round with a 13 in it never ends (advance loops forever): the host's
// per-call time limit must stop it.
const SEATS = ["a", "b"];

function view(state) {
  return {
    status: state.round >= state.rounds ? "ended" : "playing",
    participation: { mode: "simultaneous", seats: SEATS },
    round: state.round,
    total: state.total,
  };
}

export default {
  game: { id: "js/spin", version: "1", adapter: { id: "js/spin/reducer", version: "1" } },
  description: "A counter whose 13 spins forever.",
  seats: SEATS,
  levels: [{ id: "default", level: { rounds: 3 } }],
  reducer: {
    init: (level) => ({ rounds: level.rounds, round: 0, total: 0 }),
    advance(state, inputs) {
      for (const input of inputs) {
        if (input.index === 13) for (;;) {}
        state.total += input.index;
      }
      state.round += 1;
      return state;
    },
    view,
    replayMetrics: (state) => ({ actionsUsed: 2 * state.round }),
  },
  commandToAction: (command, ctx) => ({ id: "Action 1", index: command.n, seat: ctx.participantId }),
  legalActions: () => [{ n: 1 }, { n: 2 }],
};
