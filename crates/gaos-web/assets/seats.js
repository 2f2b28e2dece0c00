// Where each seat of a live session stands (GET /v1/sessions/{id}/seats, or
// the `seatStates` of the operator's session list): submitted or awaited in
// the open window, its controller lease (state, holder kind, expiry) and
// whether it is paused. Never what a seat submitted: the host does not say.

import { api, sessionPath } from "./api.js";
import { h } from "./ui.js";

/** The seat status of session `id` (`{game, status, paused, seats:[…]}`). */
export function fetchSeats(id, token) {
  return api(sessionPath(id, "/seats"), { token });
}

const WINDOW = { submitted: "submitted", awaited: "awaited", idle: "—" };
const HOLDER = { bearer: "seat token", controller: "controller" };

/** A seat's lease in words: "active · controller · until 12:03:04". */
export function leaseText(lease) {
  if (!lease) return "no holder";
  const until = new Date(lease.expiresAt).toLocaleTimeString();
  return `${lease.state} · ${HOLDER[lease.holder] || lease.holder} · until ${until}`;
}

/** The table of the watch page. */
export function seatTable(status) {
  return h(
    "table",
    { class: "seats seat-states", id: "seat-states" },
    h("caption", { class: "muted" }, status.paused ? "Paused: a seat's lease lapsed or was paused." : "Not paused."),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Seat"), h("th", { scope: "col" }, "This turn"), h("th", { scope: "col" }, "Lease"))),
    h(
      "tbody",
      {},
      status.seats.map((s) =>
        h("tr", { "data-seat": s.seat },
          h("th", { scope: "row" }, s.seat),
          h("td", { class: s.window }, WINDOW[s.window] || s.window),
          h("td", {}, leaseText(s.lease), s.paused ? " · paused" : "")),
      ),
    ),
  );
}
