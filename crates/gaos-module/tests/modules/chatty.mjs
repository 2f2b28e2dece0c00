// Logs far more than a call may; the game still works.
export default {
  game: { id: "test/chatty", version: "1", adapter: { id: "test/chatty/reducer", version: "1" } },
  seats: ["solo"],
  levels: [{ id: "default", level: {} }],
  reducer: {
    init() {
      console.log("x".repeat(100000)); // one long line (cut to 1 KiB by the host)
      for (let i = 0; i < 10000; i++) console.warn("line", i);
      return {};
    },
    advance: (state) => state,
    view: () => ({ status: "playing", hud: { actionsUsed: 0 } }),
  },
  commandToAction: (c) => ({ id: "Action 1", payload: c }),
};
