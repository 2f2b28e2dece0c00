// A game's own picture of a view (`render(view, seat)` of a module, or a
// Rust game's renderer), asked of the host and shown in a sandboxed frame:
// `sandbox=""` (no scripts, forms, popups or navigation, an opaque origin)
// and `srcdoc`, so the markup keeps this page's content security policy and
// can only draw. A game without a renderer (404 no_renderer) is remembered
// and the page keeps its own layout; a failing renderer is said in words.

import { api, ApiError } from "./api.js";
import { h } from "./ui.js";

const withoutRenderer = new Set();

/**
 * Put `game`'s picture of `view` at the top of `container` (replacing an
 * older one). Answers arriving out of order are dropped: the newest view wins.
 */
export async function showPicture(container, { game, view, seat = null, token }) {
  if (!game || !view || withoutRenderer.has(game)) return;
  const ticket = String(Number(container.dataset.pictureTicket || 0) + 1);
  container.dataset.pictureTicket = ticket;
  let node;
  try {
    const answer = await api(`/v1/games/${encodeURIComponent(game)}/render`, { token, method: "POST", body: { view, seat } });
    node = h("iframe", {
      class: "picture",
      sandbox: "",
      referrerpolicy: "no-referrer",
      title: `${game}: the game's picture of ${seat ? `${seat}'s view` : "the public view"}`,
      srcdoc: `<!doctype html><html><head><meta charset="utf-8"></head><body>${answer.html}</body></html>`,
    });
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      withoutRenderer.add(game);
      return;
    }
    node = h("p", { class: "muted picture-error" }, `The game's picture is not available: ${e.message}`);
  }
  if (container.dataset.pictureTicket !== ticket) return;
  for (const old of container.querySelectorAll(":scope > .picture, :scope > .picture-error")) old.remove();
  container.prepend(node);
}
