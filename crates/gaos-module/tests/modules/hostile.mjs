// A one-seat game whose advance misbehaves on demand: the command names what
// to try ({"try": "loop"}), and advance does it. Every other command is a
// harmless step, so one module serves every bound test.
let leak = [];

const attempts = {
  loop() {
    for (;;) {}
  },
  alloc() {
    for (;;) leak.push(new Array(100000).fill(leak.length));
  },
  dateNow: () => Date.now(),
  newDate: () => new Date(),
  random: () => Math.random(),
  setTimeout: () => setTimeout(() => {}, 0),
  fetch: () => fetch("https://example.com/"),
  require: () => require("fs"),
  importFs: () => {
    import("node:fs").catch(() => {});
  },
  importLocal: () => {
    import("./counter.mjs");
  },
  throwError() {
    throw new RangeError("the board is on fire");
  },
  throwString() {
    throw "plain string";
  },
  recurse() {
    const deep = (n) => deep(n + 1) + 1;
    return deep(0);
  },
};

export default {
  game: { id: "test/hostile", version: "1", adapter: { id: "test/hostile/reducer", version: "1" } },
  description: "A game that misbehaves when asked to.",
  seats: ["solo"],
  levels: [{ id: "default", level: {} }],
  reducer: {
    init: () => ({ steps: 0 }),
    advance(state, inputs) {
      for (const input of inputs) {
        const attempt = attempts[input.payload?.try];
        if (attempt) attempt();
      }
      state.steps += 1;
      return state;
    },
    view: (state) => ({ status: "playing", steps: state.steps, hud: { actionsUsed: state.steps } }),
  },
  commandToAction(command, ctx) {
    if (command.map === "loop") for (;;) {}
    return { id: "Action 1", payload: { try: command.try ?? "nothing" }, seat: ctx.participantId };
  },
};
