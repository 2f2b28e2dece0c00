export default {
  game: { id: "test/broken", version: "1", adapter: { id: "test/broken/reducer", version: "1" } },
  seats: ["a"],
  levels: [{ id: "default", level: {} }],
  commandToAction: (c) => c,
};
