// A one-seat module with the mistakes issue 26 found carrying one session's
// data into another's: a deep merge that follows "__proto__", a
// module-level variable holding the last seed, a write to globalThis, an
// action id that is not `Action N`, and a view that shares one array under
// many keys. Each command names what to do:
//   {"prefs": {...}}   deep-merged into the state's prefs
//   {"bloat": K}       the view puts one 60,000-element array under K keys
//   {"named": true}    commandToAction answers the id "move-left"
//   {"end": true}      ends the game
//   anything else      one harmless step
let lastSeed = null;

function merge(target, source) {
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (typeof value === "object" && value !== null) {
      if (typeof target[key] !== "object" || target[key] === null) target[key] = {};
      merge(target[key], value);
    } else {
      target[key] = value;
    }
  }
  return target;
}

const shared = new Array(60000).fill(7);

export default {
  game: { id: "test/leaky", version: "1", adapter: { id: "test/leaky/reducer", version: "1" } },
  description: "Keeps what it should not between calls, on purpose.",
  seats: ["solo"],
  levels: [{ id: "default", level: {} }],
  reducer: {
    init(_level, seed) {
      const before = lastSeed;
      lastSeed = seed;
      try {
        globalThis.leakedSeed = seed;
      } catch (_) {
        // A frozen global object refuses the write.
      }
      return { seed, seedBefore: before, prefs: {}, steps: 0, bloat: 0, ended: false };
    },
    advance(state, inputs) {
      for (const input of inputs) {
        const command = input.payload ?? {};
        if (command.prefs) merge(state.prefs, command.prefs);
        if (typeof command.bloat === "number") state.bloat = command.bloat;
        if (command.end === true) state.ended = true;
      }
      state.steps += 1;
      return state;
    },
    view(state) {
      const view = {
        status: state.ended ? "ended" : "playing",
        steps: state.steps,
        hud: { actionsUsed: state.steps },
        seed: state.seed,
        seedBefore: state.seedBefore,
        lastSeed,
        globalSeed: globalThis.leakedSeed ?? null,
        trusted: {}.trusted ?? null,
      };
      for (let i = 0; i < state.bloat; i++) view[`k${i}`] = shared;
      if (state.ended) view.outcome = { kind: "decided", ranking: [{ seat: "solo", rank: 1, score: state.steps }] };
      return view;
    },
  },
  commandToAction(command, ctx) {
    return { id: command?.named ? "move-left" : "Action 1", seat: ctx.participantId, payload: command };
  },
};
