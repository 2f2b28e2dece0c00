// An ActionReducer (apply, no advance): seats take turns adding 1 or 2; the
// seat that reaches the target wins. applyIntents is absent on purpose.
const SEATS = ["first", "second"];

export default {
  game: { id: "test/turns", version: "1", adapter: { id: "test/turns/reducer", version: "1" } },
  seats: SEATS,
  levels: [{ id: "default", level: { target: 5 } }],
  reducer: {
    init: (level) => ({ target: level.target, total: 0, turn: 0, winner: null }),
    apply(state, action) {
      state.total += action.index;
      if (state.total >= state.target) state.winner = action.seat;
      state.turn += 1;
      return state;
    },
    view(state) {
      const active = SEATS[state.turn % 2];
      return {
        status: state.winner === null ? "playing" : "won",
        ...(state.winner === null ? {} : { stars: 1 }),
        participation: { mode: "sequential", activeSeat: active },
        activeSeat: active,
        total: state.total,
        hud: { actionsUsed: state.turn },
      };
    },
    validateCommand(state, seat, action) {
      if (action.index !== 1 && action.index !== 2) throw new Error("add 1 or 2");
    },
  },
  commandToAction: (command, ctx) => ({ id: "Action 1", index: command.add, seat: ctx.participantId }),
};
