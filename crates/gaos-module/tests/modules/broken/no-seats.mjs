export default {
  game: { id: "test/broken", version: "1", adapter: { id: "test/broken/reducer", version: "1" } },
  seats: "a",
  levels: [{ id: "default", level: {} }],
  reducer: { init: () => ({}), view: () => ({ status: "playing" }), advance: (s) => s },
  commandToAction: (c) => c,
};
