// `/`: the games this host offers; with the operator token, its sessions
// (filterable) and a form to create one, answering seat tokens and links.

import { api, storeToken, takeFragment } from "./api.js";
import { leaseText } from "./seats.js";
import { h, mount, showError, tokenForm, copyButton, formatTime } from "./ui.js";

const SCOPE = "operator";

async function start() {
  const token = takeFragment(SCOPE);
  if (!token) return askToken();
  let games;
  try {
    games = (await api("/v1/games", { token })).games;
  } catch (e) {
    showError(e);
    return askToken();
  }
  showError(null);
  const created = h("section", { id: "created", "aria-label": "Created session", "aria-live": "polite" });
  const sessions = h("section", { id: "sessions", "aria-labelledby": "sessions-title" });
  mount(
    h("h1", {}, "GAOS host"),
    h("div", { class: "row end" }, h("button", { type: "button", class: "small", onclick: () => (storeToken(SCOPE, ""), askToken()) }, "Forget token")),
    gamesSection(games),
    createSection(games, token, created, () => loadSessions(token, sessions)),
    created,
    sessions,
  );
  loadSessions(token, sessions);
}

function askToken() {
  mount(
    h("h1", {}, "GAOS host"),
    tokenForm("Operator token", "The host printed where it keeps it (DATA/operator-token). A seat or spectator token shows the games only.", (t) => {
      storeToken(SCOPE, t);
      start();
    }),
  );
}

function gamesSection(games) {
  return h(
    "section",
    { "aria-labelledby": "games-title" },
    h("h2", { id: "games-title" }, "Games"),
    h("ul", { class: "games" }, games.map((g) =>
      h("li", { class: "card" }, h("h3", {}, g.id), h("p", {}, g.description || ""),
        h("p", { class: "muted" }, `Seats: ${g.seats.join(", ")} · levels: ${g.levels.map((l) => l.id).join(", ")} · ${g.cadence ? g.cadence.mode : ""}`)))),
  );
}

function createSection(games, token, target, refresh) {
  const game = h("select", { id: "create-game", name: "game" }, games.map((g) => h("option", { value: g.id }, g.id)));
  const level = h("select", { id: "create-level", name: "level" });
  const fillLevels = () => {
    const chosen = games.find((g) => g.id === game.value);
    level.replaceChildren(...(chosen ? chosen.levels : []).map((l) => h("option", { value: l.id }, l.id)));
  };
  game.addEventListener("change", fillLevels);
  fillLevels();
  const onsubmit = async (e) => {
    e.preventDefault();
    try {
      const answer = await api("/v1/sessions", { token, method: "POST", body: { game: game.value, levelId: level.value } });
      showError(null);
      target.replaceChildren(createdCard(answer, game.value));
      refresh();
    } catch (err) {
      showError(err);
    }
  };
  return h(
    "section",
    { "aria-labelledby": "create-title" },
    h("h2", { id: "create-title" }, "Create a session"),
    h("form", { class: "card row", onsubmit },
      h("label", { for: "create-game" }, "Game"), game,
      h("label", { for: "create-level" }, "Level"), level,
      h("button", { type: "submit", id: "create-button" }, "Create session")),
  );
}

function createdCard(answer, gameId) {
  const id = answer.sessionId;
  const creds = (answer.extensions && answer.extensions["gaos.host.credentials"]) || { seats: {} };
  const origin = location.origin;
  // The operator cannot watch (it has no view); keep the spectator token in
  // this tab so the list's Watch links work here.
  if (creds.spectator) storeToken(`watch:${id}`, creds.spectator);
  const watch = `${origin}/sessions/${encodeURIComponent(id)}#token=${encodeURIComponent(creds.spectator || "")}`;
  return h(
    "div",
    { class: "card created" },
    h("h3", {}, `Session ${id} (${gameId})`),
    h("p", {}, h("a", { href: watch, id: "watch-link" }, "Watch as spectator"), " ", copyButton("Copy watch link", watch)),
    h("table", { class: "seats" },
      h("thead", {}, h("tr", {}, h("th", {}, "Seat"), h("th", {}, "Token"), h("th", {}, "Play"))),
      h("tbody", {}, Object.entries(creds.seats).map(([seat, tok]) => {
        const play = `${origin}/sessions/${encodeURIComponent(id)}/play#token=${encodeURIComponent(tok)}&seat=${encodeURIComponent(seat)}`;
        return h("tr", { "data-seat": seat },
          h("th", {}, seat),
          h("td", {}, copyButton(`Copy ${seat}'s token`, tok)),
          h("td", {}, h("a", { href: play, class: "play-link", "data-seat": seat }, `Play as ${seat}`), " ", copyButton(`Copy ${seat}'s play link`, play)));
      }))),
    h("p", { class: "muted" }, "Tokens are shown once; they travel in the link's fragment, which the browser never sends to the server."),
  );
}

/** A live session's seats with their turn and lease; a stored one's names. */
function seatCell(session) {
  if (!session.seatStates) return (session.seats || []).join(", ");
  return h("ul", { class: "seat-list" }, session.seatStates.map((s) =>
    h("li", { "data-seat": s.seat },
      h("strong", {}, s.seat), s.window === "idle" ? "" : ` · ${s.window}`, s.lease ? ` · lease ${leaseText(s.lease)}` : " · no lease holder", s.paused ? " · paused" : "")));
}

async function loadSessions(token, target) {
  const status = h("select", { id: "filter-status" }, ["", "active", "terminal", "finalized", "revoked"].map((s) => h("option", { value: s }, s || "any status")));
  const text = h("input", { id: "filter-text", type: "search", placeholder: "game or id" });
  const body = h("tbody", {});
  const table = h("table", { class: "sessions" },
    h("thead", {}, h("tr", {}, ["Session", "Game", "Seats", "Status", "Cursor", "Created", ""].map((c) => h("th", { scope: "col" }, c)))), body);
  let rows = [];
  const draw = () => {
    const needle = text.value.trim().toLowerCase();
    const shown = rows.filter((s) => !needle || s.id.toLowerCase().includes(needle) || s.game.toLowerCase().includes(needle));
    body.replaceChildren(...shown.map((s) =>
      h("tr", { "data-session": s.id },
        h("td", {}, h("code", {}, s.id)), h("td", {}, s.game), h("td", {}, seatCell(s)),
        h("td", {}, h("span", { class: `badge ${s.status}` }, s.status)), h("td", {}, s.cursor ?? ""),
        h("td", {}, formatTime(s.createdAt)),
        h("td", {}, h("a", { href: `/sessions/${encodeURIComponent(s.id)}` }, "Watch")))));
    if (!shown.length) body.append(h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No sessions match.")));
  };
  const fetchRows = async () => {
    try {
      const q = status.value ? `?status=${encodeURIComponent(status.value)}` : "";
      rows = (await api(`/v1/sessions${q}`, { token })).sessions;
      draw();
    } catch (e) {
      target.replaceChildren(h("h2", { id: "sessions-title" }, "Sessions"), h("p", { class: "muted" }, "The operator token lists sessions; this token cannot."));
      return;
    }
  };
  status.addEventListener("change", fetchRows);
  text.addEventListener("input", draw);
  target.replaceChildren(
    h("h2", { id: "sessions-title" }, "Sessions"),
    h("div", { class: "row" }, h("label", { for: "filter-status" }, "Status"), status, h("label", { for: "filter-text" }, "Filter"), text,
      h("button", { type: "button", class: "small", onclick: fetchRows }, "Refresh")),
    table,
  );
  await fetchRows();
}

start();
