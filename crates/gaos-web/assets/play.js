// `/sessions/{id}/play`: one seat's own view, its legal actions as buttons
// (digits 1–9 press the n-th), a JSON editor for any command, and the
// pending/awaited state. Errors are shown in words and end nothing: the
// view is fetched again and the seat can try another move.

import { api, pageSessionId, sessionPath, storeToken, storedParam, submission, takeFragment, ApiError } from "./api.js";
import { openStream } from "./stream.js";
import { actionLabel, isOver, renderView, statusText } from "./render.js";
import { showPicture } from "./picture.js";
import { fetchSeats } from "./seats.js";
import { h, mount, showError, tokenForm } from "./ui.js";

const id = pageSessionId();
const scope = `play:${id}`;
let token = "";
let seat = "";
let envelope = null;
let previousView;
let busy = false;
let stream = null;
let game = "";

const status = h("p", { id: "status", role: "status", class: "status" });
const waiting = h("p", { id: "pending", class: "pending" });
const board = h("div", { id: "view" });
const actions = h("div", { id: "actions", class: "actions", role: "group", "aria-label": "Legal actions" });
const editor = h("textarea", { id: "command-json", rows: 4, spellcheck: "false", "aria-describedby": "command-help" });
const editorForm = h(
  "form",
  { class: "card", onsubmit: (e) => (e.preventDefault(), submitText()) },
  h("label", { for: "command-json" }, "Command (JSON)"),
  h("p", { id: "command-help", class: "muted" }, "For games whose moves are not listed, or any command you want to try. Ctrl+Enter sends."),
  editor,
  h("div", { class: "row" }, h("button", { type: "submit", id: "send-json" }, "Send command")),
);
const editorBox = h("details", { id: "editor" }, h("summary", {}, "JSON command editor"), editorForm);

function start() {
  token = takeFragment(scope);
  if (!token) {
    // The seat's name goes with its token: a submission names its seat, and
    // not every game's view says whose it is.
    const seatInput = h("input", { id: "seat-input", type: "text", autocomplete: "off", spellcheck: "false", value: storedParam(scope, "seat") });
    const form = tokenForm("Seat token", "The seat's token or play link comes from whoever created the session.", (t) => {
      if (seatInput.value.trim()) sessionStorage.setItem(`gaos.seat.${scope}`, seatInput.value.trim());
      storeToken(scope, t);
      start();
    });
    form.insertBefore(h("div", { class: "row" }, h("label", { for: "seat-input" }, "Seat (e.g. alice)"), seatInput), form.lastChild);
    mount(h("h1", {}, `Play session ${id}`), form);
    return;
  }
  mount(
    h("h1", {}, `Play session ${id}`),
    h("p", { class: "muted" }, h("span", { id: "seat-name" }, ""), " · ", h("a", { href: `/sessions/${encodeURIComponent(id)}` }, "Watch page")),
    status,
    waiting,
    h("section", { "aria-labelledby": "actions-title" }, h("h2", { id: "actions-title" }, "Your moves"), actions),
    editorBox,
    h("section", { "aria-labelledby": "view-title" }, h("h2", { id: "view-title" }, "Your view"), board),
  );
  refresh();
  // The game's id, for its picture of this seat's view.
  fetchSeats(id, token).then((status) => {
    game = status.game || "";
    if (envelope) showPicture(board, { game, view: envelope.tick || {}, seat, token });
  }, () => {});
  if (stream) stream.close();
  // Any event on the seat's stream means the session moved: fetch the tick
  // again, which carries the legal actions and the pending state.
  stream = openStream(sessionPath(id, "/stream"), token, { onEvent: () => refresh(), onDrop: () => refresh() });
}

async function refresh() {
  try {
    const next = await api(sessionPath(id, "/tick"), { token });
    show(next);
  } catch (e) {
    showError(e);
    if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
      storeToken(scope, "");
      if (stream) stream.close();
      start();
    }
  }
}

function show(next) {
  if (envelope && next.revision < envelope.revision) return;
  if (envelope && envelope.tick) previousView = envelope.tick;
  envelope = next;
  const view = next.tick || {};
  seat = storedParam(scope, "seat") || view.seat || seat;
  document.getElementById("seat-name").textContent = seat ? `Seat ${seat}` : "Seat";
  status.textContent = statusText(view, seat);
  const mine = next.kind === "pending" && (next.submittedParticipants || []).includes(seat);
  waiting.textContent = next.kind === "pending"
    ? `Submitted: ${(next.submittedParticipants || []).join(", ") || "nobody"}. Awaiting: ${(next.awaitingParticipants || []).join(", ")}.`
    : "";
  board.replaceChildren(renderView(view, { seat, previous: previousView === view ? undefined : previousView }));
  showPicture(board, { game, view, seat, token });
  const legal = Array.isArray(view.legalActions) ? view.legalActions : [];
  const over = isOver(view);
  actions.replaceChildren(
    ...legal.map((action, i) =>
      h("button", { type: "button", class: "action", "data-index": i, disabled: mine || over || busy, "aria-keyshortcuts": i < 9 ? String(i + 1) : null, onclick: () => send(action) },
        i < 9 ? h("kbd", { "aria-hidden": "true" }, String(i + 1)) : null, actionLabel(action, view))),
  );
  const awaitingReset = Boolean(next.extensions?.["gaos.session.episode"]?.awaitingReset);
  if (!legal.length) actions.append(h("p", { class: "muted" }, awaitingReset ? "This level is over." : over ? "The game is over." : mine ? "Your move is in; waiting for the others." : "No listed moves: use the JSON editor."));
  // A run that advances on reset waits at an ended level for any seat to
  // start the next one (or to finalize instead).
  if (awaitingReset) actions.append(h("button", { type: "button", id: "next-level", disabled: busy, onclick: () => nextLevel() }, "Start the next level"));
  editorBox.open = !legal.length && !over;
  // A finished game sends nothing more to this seat: stop listening (a
  // run waiting for a reset may still go on, when another seat resets).
  if (over && !awaitingReset && stream) {
    stream.close();
    stream = null;
  }
  if (!editor.value && legal.length) editor.value = JSON.stringify(legal[0]);
}

function send(command) {
  if (envelope) post("/actions", submission(envelope, seat, command));
}

// One write of the seat's; its answer is the envelope to show. A refusal
// is shown in words and the view fetched again.
async function post(route, body) {
  if (!envelope || busy) return;
  busy = true;
  try {
    const answer = await api(sessionPath(id, route), { token, method: "POST", body });
    showError(null);
    busy = false;
    show(answer);
  } catch (e) {
    busy = false;
    showError(e);
    await refresh();
  }
}

function nextLevel() {
  // The revision the level ended at: a second press, or another seat's
  // reset first, is answered with the level already started.
  if (envelope) post("/reset", { revision: envelope.revision });
}

function submitText() {
  let command;
  try {
    command = JSON.parse(editor.value);
  } catch (e) {
    showError(new Error(`The command is not valid JSON: ${e.message}`));
    return;
  }
  send(command);
}

document.addEventListener("keydown", (e) => {
  if (e.target === editor) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submitText();
    return;
  }
  if (e.altKey || e.ctrlKey || e.metaKey || !/^[1-9]$/.test(e.key) || (e.target && e.target.tagName === "INPUT")) return;
  const button = actions.querySelectorAll("button.action")[Number(e.key) - 1];
  if (button && !button.disabled) {
    e.preventDefault();
    button.click();
  }
});

start();
