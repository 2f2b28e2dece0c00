export default {
  game: { id: "test/broken", version: "1", adapter: { id: "test/broken/reducer", version: "1" } },
  seats: ["a"],
  levels: [{ id: "default", level: {} }],
  reducer: { init: () => ({}), view: () => ({ status: "playing" }), advance: 42 },
  commandToAction: (c) => c,
};
