// A real-time game: ticks cadence at 2.5 ticks per second; every tick
// advances, with or without inputs.
export default {
  game: { id: "test/ticker", version: "1", adapter: { id: "test/ticker/reducer", version: "1" } },
  seats: ["solo"],
  levels: [{ id: "default", level: {} }],
  cadence: { mode: "ticks", ticksPerSecond: 2.5 },
  reducer: {
    init: () => ({ ticks: 0, moves: 0 }),
    advance(state, inputs) {
      state.ticks += 1;
      state.moves += inputs.length;
      return state;
    },
    view: (state) => ({ status: "playing", ticks: state.ticks, hud: { actionsUsed: state.moves } }),
  },
  commandToAction: (_command, ctx) => ({ id: "Action 1", seat: ctx.participantId }),
};
