// The sandbox every game module runs in. Evaluated as a script in a fresh
// context before the module, it returns the host's private entry points
// (`bind`, `bindAdapter`); the module only ever sees the globals it installs.
//
// It captures every intrinsic it relies on first, so a module that replaces
// `JSON.parse` or `Object.keys` cannot change what crosses the boundary.
(function (hostLog) {
  "use strict";
  const G = globalThis;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const isArray = Array.isArray;
  const getProto = Object.getPrototypeOf;
  const ObjectProto = Object.prototype;
  const ArrayProto = Array.prototype;
  const keysOf = Object.keys;
  const ownNames = Object.getOwnPropertyNames;
  const ownSymbols = Object.getOwnPropertySymbols;
  const getDesc = Object.getOwnPropertyDescriptor;
  const define = Object.defineProperty;
  const freeze = Object.freeze;
  const isSafeInteger = Number.isSafeInteger;
  const isInteger = Number.isInteger;
  const isFinite = Number.isFinite;
  const hasOwn = Object.prototype.hasOwnProperty;
  const fromCharCode = String.fromCharCode;
  const apply = Reflect.apply;
  const MapCtor = Map;
  const SetCtor = Set;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const U8 = Uint8Array;
  const AB = ArrayBuffer;
  const isView = ArrayBuffer.isView;
  const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
  const regexTest = RegExp.prototype.test;
  const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

  // ---- what a game may not do -------------------------------------------
  const DETERMINISM = "games must be deterministic (replays re-run them): take randomness from the seed passed to init and time from the tick";
  function refuse(name, why) {
    const f = function () {
      throw new TypeErrorCtor(`${name} is not available to game modules: ${why}`);
    };
    define(f, "name", { value: name.split(".").pop() });
    return f;
  }
  const NoDate = refuse("Date", DETERMINISM);
  NoDate.now = refuse("Date.now", DETERMINISM);
  NoDate.parse = refuse("Date.parse", DETERMINISM);
  NoDate.UTC = refuse("Date.UTC", DETERMINISM);
  define(G, "Date", { value: NoDate, writable: true, configurable: true });
  Math.random = refuse("Math.random", DETERMINISM);
  const NO_TIMERS = "a game has no clock and no event loop; a reducer call must return its result";
  const NO_IO = "a game has no I/O and no network; everything it needs arrives as arguments";
  const NO_PACKAGES = "bundle dependencies into the module first, e.g. `npx esbuild game.ts --bundle --format=esm --outfile=game.mjs`";
  for (const name of ["setTimeout", "setInterval", "setImmediate", "clearTimeout", "clearInterval", "clearImmediate", "requestAnimationFrame"]) {
    define(G, name, { value: refuse(name, NO_TIMERS), writable: true, configurable: true });
  }
  for (const name of ["fetch", "XMLHttpRequest", "WebSocket", "EventSource", "Worker", "SharedWorker"]) {
    define(G, name, { value: refuse(name, NO_IO), writable: true, configurable: true });
  }
  define(G, "require", { value: refuse("require", NO_PACKAGES), writable: true, configurable: true });
  // Garbage-collection timing is not deterministic.
  delete G.WeakRef;
  delete G.FinalizationRegistry;
  // QuickJS extras that are not ECMAScript.
  for (const name of ["performance", "os", "std", "scriptArgs", "print"]) delete G[name];

  // ---- deterministic web APIs --------------------------------------------
  class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(input = "") {
      const s = String(input);
      const out = [];
      for (let i = 0; i < s.length; i++) {
        let c = s.charCodeAt(i);
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
          const d = s.charCodeAt(i + 1);
          if (d >= 0xdc00 && d <= 0xdfff) {
            c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
            i++;
          } else c = 0xfffd;
        } else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
        if (c < 0x80) out.push(c);
        else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
        else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
        else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      }
      return new U8(out);
    }
    encodeInto(input, dest) {
      const bytes = this.encode(input);
      const n = Math.min(bytes.length, dest.length);
      // Never split a character: back off to a sequence boundary.
      let written = n;
      while (written > 0 && written < bytes.length && (bytes[written] & 0xc0) === 0x80) written--;
      dest.set(bytes.subarray(0, written));
      let read = 0;
      const s = String(input);
      for (let b = 0; b < written; read++) {
        const c = s.codePointAt(read);
        b += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (c >= 0x10000) read++;
      }
      return { read, written };
    }
  }
  class TextDecoder {
    #fatal;
    #ignoreBOM;
    constructor(label = "utf-8", options = {}) {
      const l = String(label).trim().toLowerCase();
      if (l !== "utf-8" && l !== "utf8" && l !== "unicode-1-1-utf-8") {
        throw new RangeError(`TextDecoder: only utf-8 is available to game modules, not ${label}`);
      }
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }
    get encoding() { return "utf-8"; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input) {
      if (input === undefined) return "";
      const bytes = input instanceof AB ? new U8(input) : isView(input) ? new U8(input.buffer, input.byteOffset, input.byteLength) : null;
      if (bytes === null) throw new TypeErrorCtor("TextDecoder.decode takes an ArrayBuffer or a typed array");
      const fatal = this.#fatal;
      let out = "";
      let chunk = [];
      const flush = () => { out += fromCharCode.apply(null, chunk); chunk = []; };
      const bad = () => { if (fatal) throw new TypeErrorCtor("TextDecoder: invalid UTF-8"); chunk.push(0xfffd); };
      let i = 0;
      if (!this.#ignoreBOM && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
      while (i < bytes.length) {
        const b = bytes[i];
        let need = 0, cp = 0, min = 0;
        if (b < 0x80) { chunk.push(b); i++; if (chunk.length > 4096) flush(); continue; }
        else if (b >= 0xc2 && b <= 0xdf) { need = 1; cp = b & 0x1f; min = 0x80; }
        else if (b >= 0xe0 && b <= 0xef) { need = 2; cp = b & 0x0f; min = 0x800; }
        else if (b >= 0xf0 && b <= 0xf4) { need = 3; cp = b & 0x07; min = 0x10000; }
        else { bad(); i++; continue; }
        let j = 1;
        for (; j <= need; j++) {
          const c = bytes[i + j];
          if (c === undefined || (c & 0xc0) !== 0x80) break;
          cp = (cp << 6) | (c & 0x3f);
        }
        if (j <= need || cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
          // Emit U+FFFD for the maximal bad prefix, then reread the byte that broke it.
          bad();
          i += j <= need ? j : 1;
          continue;
        }
        i += need + 1;
        if (cp >= 0x10000) { cp -= 0x10000; chunk.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff)); }
        else chunk.push(cp);
        if (chunk.length > 4096) flush();
      }
      flush();
      return out;
    }
  }
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  function btoa(input) {
    const s = String(input);
    let out = "";
    for (let i = 0; i < s.length; i += 3) {
      const a = s.charCodeAt(i), b = s.charCodeAt(i + 1), c = s.charCodeAt(i + 2);
      if (a > 255 || b > 255 || c > 255) throw new TypeErrorCtor("btoa: the string has characters outside Latin-1");
      const n = (a << 16) | ((b || 0) << 8) | (c || 0);
      out += B64[n >> 18] + B64[(n >> 12) & 63] + (i + 1 < s.length ? B64[(n >> 6) & 63] : "=") + (i + 2 < s.length ? B64[n & 63] : "=");
    }
    return out;
  }
  function atob(input) {
    let s = String(input).replace(/[\t\n\f\r ]/g, "");
    if (s.length % 4 === 0) s = s.replace(/==?$/, "");
    if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw new TypeErrorCtor("atob: the string is not valid base64");
    let out = "", bits = 0, acc = 0;
    for (let i = 0; i < s.length; i++) {
      acc = (acc << 6) | B64.indexOf(s[i]);
      bits += 6;
      if (bits >= 8) { bits -= 8; out += fromCharCode((acc >> bits) & 255); }
    }
    return out;
  }
  function structuredClone(value) {
    const seen = new MapCtor();
    const clone = (v) => {
      if (typeof v !== "object" || v === null) {
        if (typeof v === "function" || typeof v === "symbol") throw new TypeErrorCtor(`structuredClone: a ${typeof v} cannot be cloned`);
        return v;
      }
      if (seen.has(v)) return seen.get(v);
      let out;
      if (isArray(v)) {
        out = new Array(v.length);
        seen.set(v, out);
        for (let i = 0; i < v.length; i++) if (i in v) out[i] = clone(v[i]);
      } else if (v instanceof MapCtor) {
        out = new MapCtor();
        seen.set(v, out);
        for (const [k, x] of v) out.set(clone(k), clone(x));
      } else if (v instanceof SetCtor) {
        out = new SetCtor();
        seen.set(v, out);
        for (const x of v) out.add(clone(x));
      } else if (v instanceof AB) {
        out = v.slice(0);
        seen.set(v, out);
      } else if (isView(v)) {
        out = new v.constructor(v);
        seen.set(v, out);
      } else if (v instanceof ErrorCtor) {
        out = new ErrorCtor(v.message);
        seen.set(v, out);
      } else {
        const proto = getProto(v);
        if (proto !== ObjectProto && proto !== null) throw new TypeErrorCtor("structuredClone: only plain objects, arrays, Map, Set and binary data can be cloned");
        out = {};
        seen.set(v, out);
        for (const k of keysOf(v)) out[k] = clone(v[k]);
      }
      return out;
    };
    return clone(value);
  }
  const LEVELS = ["log", "info", "debug", "warn", "error"];
  function show(v) {
    if (typeof v === "string") return v;
    if (v instanceof ErrorCtor) return `${v.name}: ${v.message}`;
    try {
      const s = stringify(v);
      return s === undefined ? String(v) : s;
    } catch (_) {
      return String(v);
    }
  }
  // Lines a call may write; every host entry point resets the budget, so
  // a chatty module costs one comparison per extra line, not a formatted
  // string and a host call.
  const LOG_LINES_PER_CALL = 20;
  let logLeft = LOG_LINES_PER_CALL;
  const resetLog = () => {
    logLeft = LOG_LINES_PER_CALL;
  };
  const console = {};
  for (const level of LEVELS) {
    console[level] = function (...args) {
      if (logLeft <= 0) return;
      logLeft -= 1;
      hostLog(level, logLeft === 0 ? "(further console output of this call is dropped)" : args.map(show).join(" "));
    };
  }
  for (const [name, value] of [["TextEncoder", TextEncoder], ["TextDecoder", TextDecoder], ["btoa", btoa], ["atob", atob], ["structuredClone", structuredClone], ["console", console]]) {
    define(G, name, { value, writable: true, configurable: true });
  }

  // ---- the value domain (kernel.md §1.1) ---------------------------------
  // `problem(v)` is null for a value in the domain, else a sentence starting
  // with the path of the first offending part (".hand[2] is undefined").
  function key(k) {
    return apply(regexTest, IDENT, [k]) ? `.${k}` : `[${stringify(k)}]`;
  }
  // `roundTrip`: only what JSON text cannot carry back unchanged is a
  // problem (a state is JSON text between calls, and never read by the
  // host): unsafe integers and lone surrogates survive JSON.stringify and
  // JSON.parse exactly, so a state may hold them; the views made from it
  // may not (the kernel refuses those as invalid_view, as the reference does).
  function problem(root, roundTrip = false) {
    const path = [];
    const open = new SetCtor();
    const at = () => (path.length === 0 ? "the value" : path.join(""));
    const walk = (v) => {
      switch (typeof v) {
        case "string":
          return !roundTrip && apply(regexTest, LONE_SURROGATE, [v]) ? `${at()} is a string with an unpaired surrogate` : null;
        case "number":
          if (!isFinite(v)) return `${at()} is ${v} (only finite numbers are JSON values)`;
          if (!roundTrip && isInteger(v) && !isSafeInteger(v)) return `${at()} is ${v}, an integer outside the JavaScript safe range`;
          return null;
        case "boolean":
          return null;
        case "undefined":
          return `${at()} is undefined`;
        case "function":
          return `${at()} is a function`;
        case "symbol":
          return `${at()} is a symbol`;
        case "bigint":
          return `${at()} is a BigInt`;
      }
      if (v === null) return null;
      if (open.has(v)) return `${at()} is a cycle (it contains itself)`;
      const proto = getProto(v);
      if (isArray(v)) {
        if (proto !== ArrayProto) return `${at()} is not a plain array`;
        open.add(v);
        for (let i = 0; i < v.length; i++) {
          path.push(`[${i}]`);
          const found = i in v ? walk(v[i]) : `${at()} is a hole (sparse arrays are not JSON values)`;
          path.pop();
          if (found !== null) return found;
        }
        open.delete(v);
        return null;
      }
      if (proto !== ObjectProto && proto !== null) {
        const name = v.constructor && typeof v.constructor.name === "string" ? v.constructor.name : "non-plain";
        return `${at()} is a ${name} object (only plain objects and arrays are JSON values)`;
      }
      if (ownSymbols(v).length > 0) return `${at()} has a symbol key`;
      open.add(v);
      const names = ownNames(v);
      for (let i = 0; i < names.length; i++) {
        const k = names[i];
        const d = getDesc(v, k);
        path.push(key(k));
        let found;
        if (d.get !== undefined || d.set !== undefined) found = `${at()} is an accessor property`;
        else if (!d.enumerable) found = `${at()} is a non-enumerable property`;
        else if (!roundTrip && apply(regexTest, LONE_SURROGATE, [k])) found = `${at()} is a key with an unpaired surrogate`;
        else found = walk(d.value);
        path.pop();
        if (found !== null) return found;
      }
      open.delete(v);
      return null;
    };
    return walk(root);
  }
  // The fast path of every boundary crossing: true when `v` is certainly
  // in the domain (`roundTrip`: survives JSON text). It allocates nothing
  // and builds no path; anything it is unsure of (deep nesting, which is
  // where cycles hide) goes to `problem` for the exact verdict and message.
  const MAX_SAFE = 9007199254740991;
  function plain(v, roundTrip, depth) {
    switch (typeof v) {
      case "string":
      case "boolean":
        return true;
      case "number":
        // Past 2^53 every double is an integer, so the range check is the
        // safe-integer check; NaN fails both comparisons.
        return roundTrip ? v - v === 0 : v <= MAX_SAFE && v >= -MAX_SAFE;
      case "object": {
        if (v === null) return true;
        if (depth > 48) return false;
        const proto = getProto(v);
        if (proto === ArrayProto) {
          for (let i = 0; i < v.length; i++) {
            const x = v[i];
            if (x === undefined || !plain(x, roundTrip, depth + 1)) return false;
          }
          return isArray(v);
        }
        if (proto !== ObjectProto && proto !== null) return false;
        const keys = keysOf(v);
        for (let i = 0; i < keys.length; i++) if (!plain(v[keys[i]], roundTrip, depth + 1)) return false;
        return true;
      }
      default:
        return false;
    }
  }
  // Lone surrogates survive the walk; JSON.stringify writes them as
  // `\udXXX` escapes (paired ones stay raw), so the text tells.
  const ESCAPED_SURROGATE = /(?:^|[^\\])(?:\\\\)*\\u[dD][89a-fA-F]/;
  function textIsWellFormed(text) {
    return text.indexOf("\\u") === -1 || !apply(regexTest, ESCAPED_SURROGATE, [text]);
  }
  // `value` as JSON text, or null when it is not in the domain.
  function tryEncode(value, roundTrip) {
    if (!plain(value, roundTrip, 0)) return null;
    const text = stringify(value);
    return roundTrip || textIsWellFormed(text) ? text : null;
  }
  // A value the host reads back: checked, then JSON text.
  function encode(value, what) {
    const text = tryEncode(value, false);
    if (text !== null) return text;
    const p = problem(value);
    if (p !== null) throw new HostError(`${what}: ${p}`);
    return stringify(value);
  }
  function encodeState(value, what) {
    const text = tryEncode(value, true);
    if (text !== null) return text;
    const p = problem(value, true);
    if (p !== null) throw new HostError(`${what}: ${p}`);
    return stringify(value);
  }
  // A view (or metrics) outside the value domain is not an exception: it
  // comes back as "!" + the problem, for the kernel's invalid_view (JSON
  // text never starts with "!").
  function encodeView(value, what) {
    const text = tryEncode(value, false);
    if (text !== null) return text;
    const p = problem(value);
    return p === null ? stringify(value) : `!${what}: ${p}`;
  }
  class HostError extends ErrorCtor {}
  define(HostError.prototype, "name", { value: "HostError" });

  function describe(e) {
    if (e instanceof ErrorCtor) return e.message === "" ? e.name : `${e.name}: ${e.message}`;
    return show(e);
  }
  // What a module's own exception says (for illegal_command causes).
  function reason(e) {
    if (e instanceof ErrorCtor) return e.message === "" ? e.name : e.message;
    return show(e);
  }
  function typeName(v) {
    if (v === null) return "null";
    if (isArray(v)) return "an array";
    return typeof v === "object" ? "an object" : `a ${typeof v}`;
  }
  function shapeError(message) {
    const e = new HostError(message);
    e.shape = true;
    return e;
  }

  // ---- the game-module shape (game-module.md §1) -------------------------
  function readShape(def, where) {
    if (typeof def !== "object" || def === null || isArray(def)) {
      throw shapeError(`${where} must be an object (the game module's description), not ${typeName(def)}`);
    }
    const field = (name, types, required) => {
      const v = def[name];
      if (v === undefined) {
        if (required) throw shapeError(`${where} is missing the required field \`${name}\``);
        return undefined;
      }
      if (!types.includes(isArray(v) ? "array" : v === null ? "null" : typeof v)) {
        const article = (t) => (t === "array" || t === "object" ? `an ${t}` : `a ${t}`);
        throw shapeError(`${where}.${name} must be ${types.map(article).join(" or ")}, not ${typeName(v)}`);
      }
      return v;
    };
    const game = field("game", ["object"], true);
    const str = (v, name) => {
      if (typeof v !== "string" || v === "") throw shapeError(`${where}.${name} must be a non-empty string, not ${typeName(v)}`);
      return v;
    };
    const gameRef = {
      id: str(game.id, "game.id"),
      version: str(game.version, "game.version"),
      adapter: (() => {
        const a = game.adapter;
        if (typeof a !== "object" || a === null) throw shapeError(`${where}.game.adapter must be an object {id, version}, not ${typeName(a)}`);
        return { id: str(a.id, "game.adapter.id"), version: str(a.version, "game.adapter.version") };
      })(),
    };
    const description = field("description", ["string"], false) ?? "";
    const seats = field("seats", ["array"], true);
    if (seats.length === 0) throw shapeError(`${where}.seats must name at least one seat`);
    seats.forEach((s, i) => str(s, `seats[${i}]`));
    const levels = field("levels", ["array"], true);
    if (levels.length === 0) throw shapeError(`${where}.levels must hold at least one level (the first is the default)`);
    const levelList = levels.map((l, i) => {
      if (typeof l !== "object" || l === null) throw shapeError(`${where}.levels[${i}] must be an object {id, version?, level}`);
      str(l.id, `levels[${i}].id`);
      if (l.version !== undefined && typeof l.version !== "string" && typeof l.version !== "number") {
        throw shapeError(`${where}.levels[${i}].version must be a string or a number, not ${typeName(l.version)}`);
      }
      if (l.level === undefined) throw shapeError(`${where}.levels[${i}] is missing the required field \`level\``);
      const p = problem(l.level);
      if (p !== null) throw shapeError(`${where}.levels[${i}].level: ${p}`);
      const out = { id: l.id, level: l.level };
      if (l.version !== undefined) out.version = l.version;
      return out;
    });
    const cadence = field("cadence", ["object"], false) ?? { mode: "turns" };
    if (cadence.mode !== "turns" && cadence.mode !== "ticks") {
      throw shapeError(`${where}.cadence.mode must be "turns" or "ticks", not ${show(cadence.mode)}`);
    }
    if (cadence.mode === "ticks" && !(isFinite(cadence.ticksPerSecond) && cadence.ticksPerSecond > 0)) {
      throw shapeError(`${where}.cadence.ticksPerSecond must be a number greater than 0 for ticks cadence, not ${show(cadence.ticksPerSecond)}`);
    }
    const reducer = field("reducer", ["object"], true);
    const commandToAction = field("commandToAction", ["function"], true);
    const timeoutToAction = field("timeoutToAction", ["function"], false);
    const legalActions = field("legalActions", ["function"], false);
    const render = field("render", ["function"], false);
    const shape = readReducer(reducer, `${where}.reducer`);
    if (cadence.mode === "ticks" && shape.advance === undefined) {
      throw shapeError(`${where}.cadence is ticks, which needs reducer.advance (a TickReducer): an ActionReducer cannot resolve an empty tick`);
    }
    return {
      meta: {
        game: gameRef,
        description,
        seats: seats.slice(),
        levels: levelList,
        cadence: cadence.mode === "ticks" ? { mode: "ticks", ticksPerSecond: cadence.ticksPerSecond } : { mode: "turns" },
        reducer: shape.meta,
        hasTimeoutToAction: timeoutToAction !== undefined,
        hasLegalActions: legalActions !== undefined,
        hasRender: render !== undefined,
      },
      reducer: shape,
      def,
      commandToAction,
      timeoutToAction,
      legalActions,
      render,
    };
  }
  function readReducer(reducer, where) {
    if (typeof reducer !== "object" || reducer === null) throw shapeError(`${where} must be an object, not ${typeName(reducer)}`);
    const fn = (name, required) => {
      const v = reducer[name];
      if (v === undefined) {
        if (required) throw shapeError(`${where} is missing the required function \`${name}\``);
        return undefined;
      }
      if (typeof v !== "function") throw shapeError(`${where}.${name} must be a function, not ${typeName(v)}`);
      return v;
    };
    const r = {
      object: reducer,
      init: fn("init", true),
      view: fn("view", true),
      advance: fn("advance", false),
      apply: fn("apply", false),
      applyIntents: fn("applyIntents", false),
      viewFor: fn("viewFor", false),
      validateCommand: fn("validateCommand", false),
      replayMetrics: fn("replayMetrics", false),
    };
    if (r.advance === undefined && r.apply === undefined) {
      throw shapeError(`${where} must have \`advance(state, inputs)\` (a TickReducer) or \`apply(state, action)\` (an ActionReducer)`);
    }
    r.meta = {
      shape: r.advance !== undefined ? "tick" : "action",
      hasApplyIntents: r.applyIntents !== undefined,
      hasViewFor: r.viewFor !== undefined,
      hasValidateCommand: r.validateCommand !== undefined,
      hasReplayMetrics: r.replayMetrics !== undefined,
    };
    return r;
  }

  // ---- calls -------------------------------------------------------------
  // Each host function takes and returns strings (JSON text); the module's
  // exceptions come back as HostErrors whose message names the module and
  // the call, so Rust only ever turns a message into a GameError.
  function reducerHost(gameId, r, seats) {
    const call = (what, f, args) => {
      try {
        return apply(f, r.object, args);
      } catch (e) {
        if (e instanceof HostError) throw e;
        throw new HostError(`${what} of ${gameId} threw ${describe(e)}`);
      }
    };
    const step = (state, inputs) => {
      if (r.advance !== undefined) return call("advance(state, inputs)", r.advance, [state, inputs]);
      if (inputs.length === 1) return call("apply(state, action)", r.apply, [state, inputs[0]]);
      if (inputs.length === 0) throw new HostError(`${gameId} is an ActionReducer (apply without advance): it cannot advance an empty tick`);
      if (r.applyIntents === undefined) throw new HostError(`${gameId}: multi-input ticks require applyIntents or a TickReducer (advance)`);
      return call("applyIntents(state, actions)", r.applyIntents, [state, inputs]);
    };
    // Messages are built once here, not on every call.
    const produced = r.advance !== undefined ? "advance(state, inputs)" : "apply(state, action)";
    const stateLabels = {
      init: `the state init(level, seed) of ${gameId} returned`,
      restored: `the checkpointed state of ${gameId}`,
      step: `the state ${produced} of ${gameId} returned`,
    };
    const viewLabel = `view(state) of ${gameId}`;
    const metricsLabel = `replayMetrics(state) of ${gameId}`;
    const seatCalls = seats.map((seat) => `viewFor(state, ${stringify(seat)})`);
    const seatLabels = seatCalls.map((what) => `${what} of ${gameId}`);
    // The state as JSON text, then everything the kernel derives from it:
    // view, replayMetrics (or null), then viewFor per seat, as the values
    // themselves. The host reads each value straight out of the engine and
    // asks `explainPart` only about one it cannot read as certainly in the
    // value domain. The state text is fixed before the views run, so a view
    // that mutates the state cannot change what is stored.
    const derive = (state, stateLabel) => {
      const out = [encodeState(state, stateLabel), call("view(state)", r.view, [state])];
      out.push(r.replayMetrics !== undefined ? call("replayMetrics(state)", r.replayMetrics, [state]) : null);
      if (r.viewFor !== undefined) {
        for (let i = 0; i < seats.length; i++) out.push(call(seatCalls[i], r.viewFor, [state, seats[i]]));
      }
      return out;
    };
    // Derived part `i` (0: view, 1: replayMetrics, 2...: viewFor per seat)
    // as JSON text, or "!" and the problem (JSON text never starts with "!").
    const partLabels = [viewLabel, metricsLabel, ...seatLabels];
    return {
      explainPart: (i, value) => encodeView(value, partLabels[i]),
      init(levelText, seed) {
        resetLog();
        const init = call("init(level, seed)", r.init, [parse(levelText), seed]);
        return derive(init, stateLabels.init);
      },
      advance(stateText, inputsText) {
        resetLog();
        return derive(step(parse(stateText), parse(inputsText)), stateLabels.step);
      },
      // A state restored from a kernel checkpoint: its derived parts again.
      derive(stateText) {
        resetLog();
        return derive(parse(stateText), stateLabels.restored);
      },
      viewFor(stateText, seat) {
        resetLog();
        const state = parse(stateText);
        if (r.viewFor === undefined) return encodeView(call("view(state)", r.view, [state]), viewLabel);
        const what = `viewFor(state, ${stringify(seat)})`;
        return encodeView(call(what, r.viewFor, [state, seat]), `${what} of ${gameId}`);
      },
      // "" when the action is allowed, else the module's reason.
      validate(stateText, seat, actionText) {
        if (r.validateCommand === undefined) return "";
        resetLog();
        try {
          apply(r.validateCommand, r.object, [parse(stateText), seat, parse(actionText)]);
          return "";
        } catch (e) {
          const text = reason(e);
          return text === "" ? "refused" : text;
        }
      },
    };
  }
  // `explain(which, value)`: a mapper's result as JSON text, or a HostError
  // naming the mapper and the first part outside the value domain.
  function explainer(owner) {
    const labels = {
      command: `commandToAction(command, ctx) of ${owner} returned a value that`,
      timeout: `timeoutToAction(ctx, timeout) of ${owner} returned a value that`,
      legal: `legalActions(view, seat) of ${owner} returned a value that`,
    };
    return (which, value) => encode(value, labels[which]);
  }
  function bind(ns, file) {
    if (!hasOwn.call(ns, "default")) {
      throw shapeError(`the module has no default export (game-module.md §1: \`export default { game, seats, levels, reducer, commandToAction, ... }\`)`);
    }
    const m = readShape(ns.default, "export default");
    const gameId = m.meta.game.id;
    const host = reducerHost(gameId, m.reducer, m.meta.seats);
    // A mapper answers its result as it is; the host reads it straight out
    // of the engine and calls `explain` only for one it cannot read as
    // certainly in the value domain (which throws the exact problem).
    const mapper = (what, f) => (args) => {
      resetLog();
      try {
        return apply(f, m.def, args);
      } catch (e) {
        throw new HostError(`${what} of ${gameId} threw ${describe(e)}`);
      }
    };
    const command = mapper("commandToAction(command, ctx)", m.commandToAction);
    const timeout = mapper("timeoutToAction(ctx, timeout)", m.timeoutToAction);
    const legal = mapper("legalActions(view, seat)", m.legalActions);
    // The command context arrives as arguments (cheaper than JSON text).
    host.command = (commandText, sessionId, participantId, submissionId, cursor, tick) =>
      command([parse(commandText), { sessionId, participantId, submissionId, cursor, tick }]);
    host.timeout = (ctxText, timeoutText) => timeout([parse(ctxText), parse(timeoutText)]);
    host.legal = (viewText, seat) => legal([parse(viewText), seat]);
    host.explain = explainer(gameId);
    // render(view, seat) answers markup, not a JSON value: a string or an
    // error (seat "" is the public view, handed to the module as null).
    const renderLabel = `render(view, seat) of ${gameId}`;
    host.render = (viewText, seat) => {
      resetLog();
      if (m.render === undefined) throw new HostError(`${gameId} exports no render(view, seat)`);
      let out;
      try {
        out = apply(m.render, m.def, [parse(viewText), seat === "" ? null : seat]);
      } catch (e) {
        throw new HostError(`${renderLabel} threw ${describe(e)}`);
      }
      if (typeof out !== "string") throw new HostError(`${renderLabel} must return a string (HTML or SVG), not ${typeName(out)}`);
      return out;
    };
    return [stringify(m.meta), host];
  }

  // ---- the reference verifier-adapter shape (game-module.md §2) ----------
  function bindAdapter(ns, file) {
    const resolve = typeof ns.resolveReplayReducer === "function" ? ns.resolveReplayReducer : typeof ns.default === "function" ? ns.default : undefined;
    if (resolve === undefined) {
      throw shapeError(`${file} is neither a game module (export default { game, ... }) nor a verifier adapter (export function resolveReplayReducer(context), or a default export function)`);
    }
    const semantic = typeof ns.semanticAdapterForLevel === "function" ? ns.semanticAdapterForLevel : undefined;
    if (ns.semanticAdapterForLevel !== undefined && semantic === undefined) {
      throw shapeError(`${file}: export semanticAdapterForLevel must be a function, not ${typeName(ns.semanticAdapterForLevel)}`);
    }
    // One level context at a time: the reducer resolved for it and its
    // semantic adapter (both stay in this engine until the next level).
    return {
      forLevel(contextText, seatsText) {
        resetLog();
        const context = parse(contextText);
        const gameId = context.game.id;
        let reducer;
        try {
          reducer = apply(resolve, ns, [context]);
        } catch (e) {
          throw new HostError(`resolveReplayReducer(context) of ${file} threw ${describe(e)}`);
        }
        if (reducer === undefined || reducer === null) return "";
        const r = readReducer(reducer, "resolveReplayReducer(context)");
        const host = reducerHost(gameId, r, parse(seatsText));
        let adapter = {};
        if (semantic !== undefined) {
          try {
            adapter = apply(semantic, ns, [context]) ?? {};
          } catch (e) {
            throw new HostError(`semanticAdapterForLevel(context) of ${file} threw ${describe(e)}`);
          }
        }
        const mapped = (what, f, args) => {
          resetLog();
          try {
            return apply(f, adapter, args);
          } catch (e) {
            throw new HostError(`${what} of ${file} threw ${describe(e)}`);
          }
        };
        const c2a = typeof adapter.commandToAction === "function" ? adapter.commandToAction : undefined;
        const t2a = typeof adapter.timeoutToAction === "function" ? adapter.timeoutToAction : undefined;
        host.command = (commandText, sessionId, participantId, submissionId, cursor, tick) =>
          mapped("commandToAction(command, ctx)", c2a, [parse(commandText), { sessionId, participantId, submissionId, cursor, tick }]);
        host.timeout = (ctxText, timeoutText) => mapped("timeoutToAction(ctx, timeout)", t2a, [parse(ctxText), parse(timeoutText)]);
        host.legal = () => [];
        host.explain = explainer(file);
        host.render = () => {
          throw new HostError(`${file} is a verifier adapter: it renders nothing`);
        };
        const meta = { reducer: r.meta, hasCommandToAction: c2a !== undefined, hasTimeoutToAction: t2a !== undefined };
        return [stringify(meta), host];
      },
    };
  }

  // The intrinsic prototypes as this prelude captured them: the host's
  // reader of the value domain accepts exactly the objects `plain` does.
  // `shared`: what `lockdown.js` freezes beside the global object's graph.
  return {
    bind,
    bindAdapter,
    isShapeError: (e) => e instanceof HostError && e.shape === true,
    prototypes: [ObjectProto, ArrayProto],
    shared: [HostError],
  };
})
