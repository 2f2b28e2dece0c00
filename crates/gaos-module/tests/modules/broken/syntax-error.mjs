export default {
  game: { id: "test/broken", version: "1" adapter: {} },
};
