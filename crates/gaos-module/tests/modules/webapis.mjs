// Exercises the globals a module has (game-module.md §4) at load time and in
// init; the test reads the results from the view.
const encoder = new TextEncoder(); // bundled SDK code does this at load time

function probe() {
  const bytes = encoder.encode("h\u00e9\u20ac\u{1F600}");
  const decoded = new TextDecoder().decode(bytes);
  const lenient = new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0x62, 0xe2, 0x82]));
  let fatal = "no error";
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xc3]));
  } catch (e) {
    fatal = e.name;
  }
  const original = { a: [1, { b: 2 }], m: new Map([["k", new Set([1, 2])]]) };
  original.self = original;
  const copy = structuredClone(original);
  const typeofs = ["process", "WeakRef", "FinalizationRegistry", "setTimeout", "fetch", "require", "Date", "console"];
  return {
    utf8: Array.from(bytes),
    decoded,
    lenient,
    fatal,
    btoa: btoa("hello, world"),
    atob: atob("aGVsbG8sIHdvcmxk"),
    cloneIsDeep: copy.a[1] !== original.a[1] && copy.a[1].b === 2,
    cloneKeepsCycles: copy.self === copy,
    cloneMapSet: copy.m.get("k").has(2),
    typeofs: Object.fromEntries(typeofs.map((name) => [name, typeof globalThis[name]])),
    es2023: [1, 2, 3].findLast((x) => x < 3) + [3, 1, 2].toSorted().at(-1) + Object.groupBy([1, 2, 3], (x) => (x % 2 ? "odd" : "even")).odd.length,
    sortsByCodeUnit: ["b", "a", "\u00e9", "B", "\u{1F600}", "\uFFFF"].sort(),
    numbers: [0.1 + 0.2, 1e21, -0, 2 ** 53, 5e-324].map(String),
    keyOrder: Object.keys({ b: 1, 2: 1, a: 1, 1: 1 }),
  };
}

export default {
  game: { id: "test/webapis", version: "1", adapter: { id: "test/webapis/reducer", version: "1" } },
  seats: ["solo"],
  levels: [{ id: "default", level: {} }],
  reducer: {
    init: () => {
      console.log("init runs", { with: "an object" });
      return { probe: probe() };
    },
    advance: (state) => state,
    view: (state) => ({ status: "playing", probe: state.probe, hud: { actionsUsed: 0 } }),
  },
  commandToAction: (command) => ({ id: "Action 1", payload: command }),
};
