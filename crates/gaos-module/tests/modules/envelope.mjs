// Commands carry commit/reveal envelopes through as given, like the sealed
// conformance game; the kernel judges them.
export default {
  game: { id: "test/envelope", version: "1", adapter: { id: "test/envelope/reducer", version: "1" } },
  seats: ["a", "b"],
  levels: [{ id: "default", level: { limit: 9007199254740991 } }],
  reducer: {
    init: (level) => ({ total: level.limit, rounds: 0 }),
    advance(state, inputs) {
      state.total += inputs.length; // leaves the safe range after one round
      state.rounds += 1;
      return state;
    },
    view: (state) => ({ status: "playing", total: state.total, hud: { actionsUsed: state.rounds } }),
  },
  commandToAction(command, ctx) {
    const action = { id: "Action 1", seat: ctx.participantId };
    if ("commit" in command) action.commit = command.commit;
    if ("reveal" in command) action.reveal = command.reveal;
    return action;
  },
};
