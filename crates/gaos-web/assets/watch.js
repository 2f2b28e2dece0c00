// `/sessions/{id}`: watch a session as the spectator. The public view comes
// over the session's stream (fetch with the Authorization header); a dropped
// stream is reopened, and the public tick is fetched meanwhile so the page
// never shows a stale position for long.

import { api, pageSessionId, sessionPath, storeToken, takeFragment, ApiError } from "./api.js";
import { openStream } from "./stream.js";
import { isOver, outcomeText, renderView, statusText } from "./render.js";
import { showPicture } from "./picture.js";
import { fetchSeats, seatTable } from "./seats.js";
import { h, mount, showError, tokenForm } from "./ui.js";

const id = pageSessionId();
const scope = `watch:${id}`;
let token = "";
let stream = null;
let last = null;
let previous;
const frames = [];
let game = "";
let seatsTimer = null;
let over = false;

const status = h("p", { id: "status", role: "status", class: "status" });
const connection = h("p", { id: "connection", class: "muted" }, "Connecting…");
const board = h("div", { id: "view" });
const history = h("ol", { id: "history", class: "history", "aria-label": "Transitions" });
const log = h("ol", { id: "event-log", class: "log", "aria-label": "Event log" });
const finished = h("div", { id: "finished" });
const seats = h("div", { id: "seats" });

function start() {
  token = takeFragment(scope);
  if (!token) {
    mount(h("h1", {}, `Watch session ${id}`), tokenForm("Spectator token", "The spectator token shown when the session was created (a seat's token shows that seat's view instead).", (t) => (storeToken(scope, t), start())));
    return;
  }
  mount(
    h("h1", {}, `Watch session ${id}`),
    status,
    connection,
    finished,
    h("div", { class: "columns" },
      h("section", { "aria-labelledby": "view-title" },
        h("h2", { id: "seats-title" }, "Seats"), seats,
        h("h2", { id: "view-title" }, "Public view"), board),
      h("section", { "aria-labelledby": "history-title" }, h("h2", { id: "history-title" }, "History"), history,
        h("h2", {}, "Event log"), log)),
  );
  snapshot();
  refreshSeats();
  // Submissions that do not resolve a window send the spectator nothing,
  // so who is awaited is asked for every second while the game runs.
  if (seatsTimer) clearInterval(seatsTimer);
  seatsTimer = setInterval(() => !over && refreshSeats(), 1000);
  if (stream) stream.close();
  stream = openStream(sessionPath(id, "/stream"), token, {
    onOpen: () => (connection.textContent = "Live: updates arrive as they happen."),
    onDrop: () => {
      connection.textContent = "Stream dropped; reconnecting (showing the latest snapshot).";
      snapshot();
    },
    onEvent,
  });
}

function onEvent(name, data) {
  let value;
  try {
    value = JSON.parse(data);
  } catch {
    return;
  }
  logEvent(name, value);
  if (name === "public" || name === "lease") refreshSeats();
  if (name === "public") showFrame(value.tick, value.transitionRevision, value.view);
  // A seat's token streams that seat's deltas: show its view from a snapshot.
  else if (name === "delta" || name === "resync") snapshot();
}

async function refreshSeats() {
  try {
    const status = await fetchSeats(id, token);
    seats.replaceChildren(seatTable(status));
    if (!game && status.game) {
      game = status.game;
      if (last) showPicture(board, { game, view: last.view, token });
    }
  } catch (e) {
    seats.replaceChildren(h("p", { class: "muted" }, `Seat states are not available: ${e.message}`));
  }
}

async function snapshot() {
  try {
    const envelope = await api(sessionPath(id, "/tick"), { token });
    showError(null);
    showFrame(envelope.revision, null, envelope.tick);
  } catch (e) {
    showError(e);
    if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
      if (stream) stream.close();
      storeToken(scope, "");
      start();
    }
  }
}

function showFrame(tick, revision, view) {
  if (!view) return;
  // The same position may arrive twice (the snapshot's tick and the stream's
  // first frame, which lacks the seat-only fields): show it once.
  const { legalActions, done, ...rest } = view;
  void legalActions;
  void done;
  const key = JSON.stringify(rest);
  if (last && last.key === key) return;
  if (last) previous = last.view;
  last = { key, view, tick };
  status.textContent = `Tick ${tick}. ${statusText(view)}`;
  board.replaceChildren(renderView(view, { previous }));
  showPicture(board, { game, view, token });
  frames.push({ tick, revision, view });
  history.append(h("li", {}, `tick ${tick}${revision != null ? ` · transition ${revision}` : ""} · ${new Date().toLocaleTimeString()}`));
  if (isOver(view)) {
    over = true;
    finished.replaceChildren(
      h("div", { class: "card result" },
        h("h2", {}, "Finished"),
        h("p", { id: "result" }, outcomeText(view.outcome) || "Game over."),
        h("p", {}, h("a", { href: `/replay#session=${encodeURIComponent(id)}`, id: "replay-link" }, "Open the replay"))),
    );
  }
}

function logEvent(name, value) {
  const text = name === "lease" ? `lease: ${value.kind || value.event || ""} ${value.seat || ""} ${value.reason || ""}`.trim()
    : name === "public" ? `public view at tick ${value.tick}`
    : `${name}`;
  log.prepend(h("li", { class: `event-${name}` }, `${new Date().toLocaleTimeString()} ${text}`));
  while (log.children.length > 200) log.lastChild.remove();
}

start();
