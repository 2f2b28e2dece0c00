export default {
  game: { id: "test/broken", version: "1", adapter: { id: "test/broken/reducer", version: "1" } },
  seats: ["a"],
  levels: [{ id: "default", level: {} }],
  cadence: { mode: "ticks", ticksPerSecond: 10 },
  reducer: { init: () => ({}), view: () => ({ status: "playing" }), apply: (s) => s },
  commandToAction: (c) => c,
};
