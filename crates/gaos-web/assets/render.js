// Rendering a view: a renderer for each built-in game (chosen by the view's
// shape, since a seat's view does not name its game), then the generic
// key/value layout of the whole view below it, with what changed since the
// previous view highlighted.

import { h } from "./ui.js";

const SKIP = new Set(["legalActions"]);

/** The element showing `view` (`previous`: the view before, for diffs). */
export function renderView(view, { seat, previous } = {}) {
  const special = RENDERERS.find((r) => r.fits(view));
  return h(
    "div",
    { class: "view" },
    special ? h("div", { class: "board", "data-renderer": special.name }, special.render(view, seat)) : null,
    h("details", { class: "raw", open: special ? null : true }, h("summary", {}, "All fields"), generic(view, previous)),
  );
}

/** The generic layout: objects as definition lists, arrays of arrays as grids. */
export function generic(value, previous, path = "") {
  if (Array.isArray(value)) {
    if (value.length && value.every((row) => Array.isArray(row) && row.every(isScalar))) {
      return grid(value, Array.isArray(previous) ? previous : null);
    }
    if (value.every(isScalar)) return leaf(value.map(show).join(", ") || "(none)", value, previous);
    return h("ol", { class: "kv-list", start: 0 }, value.map((item, i) => h("li", {}, generic(item, at(previous, i), `${path}/${i}`))));
  }
  if (value && typeof value === "object") {
    const keys = Object.keys(value).filter((k) => !SKIP.has(k));
    if (!keys.length) return leaf("(empty)", value, previous);
    return h(
      "dl",
      { class: "kv" },
      keys.map((key) => [h("dt", {}, key), h("dd", {}, generic(value[key], at(previous, key), `${path}/${key}`))]),
    );
  }
  return leaf(show(value), value, previous);
}

function at(previous, key) {
  return previous && typeof previous === "object" ? previous[key] : undefined;
}

function isScalar(v) {
  return v === null || typeof v !== "object";
}

function show(v) {
  return typeof v === "string" ? v : JSON.stringify(v);
}

function leaf(text, value, previous) {
  const changed = previous !== undefined && JSON.stringify(previous) !== JSON.stringify(value);
  return h("span", { class: changed ? "changed" : null, title: changed ? `was ${JSON.stringify(previous)}` : null }, text);
}

function grid(rows, previous) {
  return h(
    "table",
    { class: "grid" },
    h(
      "tbody",
      {},
      rows.map((row, y) =>
        h(
          "tr",
          {},
          row.map((cell, x) => {
            const before = previous && previous[y] ? previous[y][x] : undefined;
            return h("td", { class: before !== undefined && before !== cell ? "changed" : null }, show(cell));
          }),
        ),
      ),
    ),
  );
}

/** Whose turn it is and the outcome, in words, for the status region. */
export function statusText(view, seat) {
  if (!view || typeof view !== "object") return "No view yet.";
  const outcome = view.outcome && view.outcome.kind && view.outcome.kind !== "ongoing" ? outcomeText(view.outcome) : "";
  if (isOver(view)) {
    return `Game over${outcome ? ": " + outcome : ""}.`;
  }
  const p = view.participation || {};
  if (p.mode === "sequential" && p.activeSeat) {
    return p.activeSeat === seat ? "Your turn." : `Waiting for ${p.activeSeat}.`;
  }
  if (p.mode === "simultaneous") return "Playing: every seat moves each turn.";
  return "Playing.";
}

/** Whether a view is of a finished game (`done`, or a status past `playing`). */
export function isOver(view) {
  return !!view && (view.done === true || (typeof view.status === "string" && view.status !== "playing"));
}

export function outcomeText(outcome) {
  if (!outcome) return "";
  const parts = [outcome.kind];
  if (outcome.winner) parts.push(`winner ${outcome.winner}`);
  if (outcome.winners) parts.push(`winners ${outcome.winners.join(", ")}`);
  if (Array.isArray(outcome.ranking)) {
    const first = outcome.ranking.filter((r) => r.rank === 1).map((r) => r.seat);
    if (first.length) parts.push(`${first.length > 1 ? "tied first" : "winner"} ${first.join(", ")}`);
  }
  if (outcome.reason) parts.push(outcome.reason);
  return parts.join(", ");
}

/** The accessible name of a legal action: its fields in words. */
export function actionLabel(action, view) {
  if (action && typeof action === "object") {
    if ("card" in action && Array.isArray(view && view.hand)) return `Play card ${view.hand[action.card]}`;
    if ("cell" in action) return `Mark cell ${action.cell + 1} (row ${Math.floor(action.cell / 3) + 1}, column ${(action.cell % 3) + 1})`;
    if ("move" in action) return `Move ${DIRECTIONS[action.move] || action.move}`;
    if ("boost" in action) return action.boost ? "Boost" : "Coast";
    const parts = Object.entries(action).map(([k, v]) => `${k} ${show(v)}`);
    if (parts.length) return parts.join(", ");
  }
  return show(action);
}

const DIRECTIONS = { n: "north", e: "east", s: "south", w: "west" };

const RENDERERS = [
  {
    name: "hilo",
    fits: (v) => v && v.handCounts && v.score && "round" in v,
    render(v, seat) {
      return [
        v.hand ? h("div", { class: "cards", "aria-label": "Your hand" }, v.hand.map((c) => h("span", { class: "card-face" }, String(c)))) : null,
        h("table", { class: "scores" }, h("caption", {}, `Round ${v.round + 1}`), h("thead", {}, h("tr", {}, h("th", {}, "Seat"), h("th", {}, "Cards left"), h("th", {}, "Score"))),
          h("tbody", {}, Object.keys(v.score).map((s) => h("tr", { class: s === seat ? "me" : null }, h("th", {}, s), h("td", {}, v.handCounts[s]), h("td", {}, v.score[s]))))),
        (v.history || []).length
          ? h("ol", { class: "history", "aria-label": "Rounds played" }, v.history.map((r) => h("li", {}, Object.entries(r).map(([k, x]) => `${k}: ${show(x)}`).join(" · "))))
          : null,
      ];
    },
  },
  {
    name: "tictactoe",
    fits: (v) => v && typeof v.board === "string" && v.board.length === 9,
    render(v) {
      const cells = [...v.board];
      return h(
        "table",
        { class: "ttt", "aria-label": "Board" },
        h("tbody", {}, [0, 1, 2].map((r) => h("tr", {}, [0, 1, 2].map((c) => {
          const mark = cells[r * 3 + c];
          return h("td", { "aria-label": `row ${r + 1} column ${c + 1}: ${mark === "." ? "empty" : mark}` }, mark === "." ? "" : mark.toUpperCase());
        })))),
      );
    },
  },
  {
    name: "maze",
    // A seat sees `visible` cells (fog elsewhere); the full view has the
    // whole `maze`, one hex digit of open sides per cell (n 1, e 2, s 4, w 8).
    fits: (v) => v && (Array.isArray(v.visible) || Array.isArray(v.maze)) && typeof v.width === "number" && typeof v.height === "number",
    render(v) {
      const seen = new Map();
      if (Array.isArray(v.visible)) for (const c of v.visible) seen.set(`${c.x},${c.y}`, c);
      else v.maze.forEach((row, y) => [...row].forEach((digit, x) => {
        const bits = parseInt(digit, 16);
        seen.set(`${x},${y}`, { x, y, open: ["n", "e", "s", "w"].filter((_, i) => bits & (1 << i)) });
      }));
      const rows = [];
      for (let y = 0; y < v.height; y++) {
        const row = [];
        for (let x = 0; x < v.width; x++) {
          const cell = seen.get(`${x},${y}`);
          const here = v.position && v.position.x === x && v.position.y === y;
          const exit = v.exit && v.exit.x === x && v.exit.y === y;
          const open = cell ? cell.open || [] : [];
          const classes = ["m", cell ? "seen" : "fog", here ? "here" : "", exit ? "exit" : ""].concat(["n", "e", "s", "w"].filter((d) => !open.includes(d)).map((d) => "wall-" + d));
          const label = `x ${x} y ${y}: ${here ? "you" : exit ? "exit" : cell ? "open " + (open.join(" ") || "none") : "unseen"}`;
          row.push(h("td", { class: cell ? classes.join(" ") : "m fog", "aria-label": label, "data-x": x, "data-y": y }, here ? "●" : exit ? "★" : ""));
        }
        rows.push(h("tr", {}, row));
      }
      return [h("table", { class: "maze", "aria-label": "Maze" }, h("tbody", {}, rows)), h("p", { class: "muted" }, `Moves ${v.moves} of ${v.maxSteps}; position x ${v.position.x}, y ${v.position.y}.`)];
    },
  },
  {
    name: "race",
    fits: (v) => v && v.course && v.pos && typeof v.course === "object",
    render(v) {
      const cells = Object.keys(v.course).sort();
      return h(
        "table",
        { class: "race", "aria-label": "Race track" },
        h("tbody", {}, Object.keys(v.pos).map((seat) => h("tr", {}, h("th", {}, seat), cells.map((id, i) =>
          h("td", { class: v.course[id], "aria-label": `${id} ${v.course[id]}${v.pos[seat] === i ? ": " + seat : ""}` }, v.pos[seat] === i ? "▶" : ""))))),
      );
    },
  },
  {
    name: "sealed",
    fits: (v) => v && typeof v.phase === "string" && "bids" in v,
    render(v) {
      return [
        h("p", { class: "phase" }, `Phase: ${v.phase}. Committed: ${(v.committed || []).join(", ") || "nobody yet"}.`),
        h("ul", { class: "bids", "aria-label": "Revealed bids" }, Object.entries(v.bids || {}).map(([s, b]) => h("li", {}, `${s}: ${show(b)}`))),
      ];
    },
  },
];
