// Run once per engine, after the prelude and before any module code: one
// realm serves every session of the module (each session has its own
// instance of the module's files, `realm.rs`), so everything the instances
// share is frozen: every intrinsic (also those reached only through
// instances), the global object and what the prelude installed (`shared`:
// its own classes). A module that writes to `Object.prototype` or
// `globalThis` (a deep merge fed `{"__proto__": ...}`) gets a TypeError
// instead of changing what other sessions see.
(function (shared) {
  "use strict";
  const G = globalThis;
  const getProto = Object.getPrototypeOf;
  const getDesc = Object.getOwnPropertyDescriptor;
  const define = Object.defineProperty;
  const freeze = Object.freeze;
  const ownKeys = Reflect.ownKeys;
  const SetCtor = Set;
  const TypeErrorCtor = TypeError;

  // A frozen data property cannot be shadowed by assignment on an object that
  // inherits it (`this.name = "BoardError"` in an Error subclass would throw).
  // These become accessors whose setter defines an own property on the object
  // assigned to, as an unfrozen prototype would have let it.
  function enableOverride(target, name) {
    const d = getDesc(target, name);
    if (d === undefined || !("value" in d) || !d.configurable) return;
    const value = d.value;
    const label = typeof name === "symbol" ? name.toString() : name;
    define(target, name, {
      get: function () {
        return value;
      },
      set: function (v) {
        if (this === target) throw new TypeErrorCtor(`Cannot assign to ${label} of a frozen built-in prototype`);
        define(this, name, { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: d.enumerable,
      configurable: false,
    });
  }
  const errors = [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError];
  if (typeof AggregateError === "function") errors.push(AggregateError);
  for (const E of errors) for (const name of ["constructor", "name", "message", "toString"]) enableOverride(E.prototype, name);
  for (const name of ["constructor", "toString", "valueOf", "toLocaleString"]) enableOverride(Object.prototype, name);
  for (const name of ["constructor", "toString", "bind"]) enableOverride(Function.prototype, name);
  for (const name of ["toString", "push", "concat", Symbol.iterator]) enableOverride(Array.prototype, name);
  enableOverride(Promise.prototype, "constructor");

  // Everything reachable from the roots (own properties, accessors,
  // prototypes), frozen once the walk is done.
  function lockdown(roots) {
    const seen = new SetCtor();
    const stack = roots.slice();
    while (stack.length > 0) {
      const o = stack.pop();
      if ((typeof o !== "object" && typeof o !== "function") || o === null || seen.has(o)) continue;
      seen.add(o);
      for (const k of ownKeys(o)) {
        const d = getDesc(o, k);
        if (d === undefined) continue;
        if ("value" in d) stack.push(d.value);
        else stack.push(d.get, d.set);
      }
      stack.push(getProto(o));
    }
    for (const o of seen) freeze(o);
  }
  const hidden = [
    // Reached only through instances, not from the global object.
    getProto(function* () {}),
    getProto(async function () {}),
    getProto(async function* () {}),
    getProto([][Symbol.iterator]()),
    getProto(new Map()[Symbol.iterator]()),
    getProto(new Set()[Symbol.iterator]()),
    getProto(""[Symbol.iterator]()),
    getProto(/x/[Symbol.matchAll]("x")),
    getProto(Uint8Array),
    getDesc(Function.prototype, "caller")?.get,
    (function () {
      "use strict";
      return getDesc(arguments, "callee")?.get;
    })(),
  ];
  const values = [].values();
  if (typeof values.map === "function") hidden.push(getProto(values.map((x) => x)));
  if (typeof G.Iterator === "function" && typeof G.Iterator.from === "function") {
    hidden.push(getProto(G.Iterator.from({ next: () => ({ done: true }) })));
  }
  lockdown([G, ...hidden, ...shared]);
});
