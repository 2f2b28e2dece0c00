// Views outside the JSON value domain, chosen by the level's `fault`.
const faults = {
  undefinedField: () => ({ hand: [1, 2, undefined] }),
  nan: () => ({ score: NaN }),
  fn: () => ({ onClick() {} }),
  cycle: () => {
    const a = { items: [] };
    a.items.push(a);
    return a;
  },
  map: () => ({ seen: new Map() }),
  sparse: () => ({ cells: [1, , 3] }),
  bigint: () => ({ big: 10n }),
  unsafe: () => ({ n: 2 ** 53 }),
  surrogate: () => ({ name: "\ud800" }),
  endedWithStars: () => ({ status: "ended", stars: 2 }),
  notAnObject: () => "a string",
  viewThrows: () => {
    throw new Error("no view today");
  },
  stateNotJson: () => ({}),
};

export default {
  game: { id: "test/badview", version: "1", adapter: { id: "test/badview/reducer", version: "1" } },
  seats: ["solo"],
  levels: [{ id: "default", level: { fault: "none" } }],
  reducer: {
    init: (level) => (level.fault === "stateNotJson" ? { fault: level.fault, when: undefined } : { fault: level.fault }),
    advance: (state) => state,
    view(state) {
      const fault = faults[state.fault];
      const extra = fault ? fault() : {};
      if (typeof extra !== "object" || extra.status) return extra;
      return { status: "playing", hud: { actionsUsed: 0 }, ...extra };
    },
  },
  commandToAction: (command) => ({ id: "Action 1", payload: command }),
};
