// The duel fixture with a picture: `render(view, seat)` draws the score,
// the last round's cards and, in a seat's view, that seat's own hand.
import duel from "./duel.mjs";

function card(x, value, label) {
  return `<g transform="translate(${x} 52)"><rect width="34" height="48" rx="5" fill="#fff" stroke="#1f2937"/>` +
    `<text x="17" y="31" text-anchor="middle" font-size="20" fill="#111827" aria-label="${label}">${value}</text></g>`;
}

function render(view, seat) {
  const score = `east ${view.score.east} : ${view.score.west} west`;
  const cards = Array.isArray(view.hand) ? view.hand.map((value, i) => card(12 + 42 * i, value, `card ${value}`)).join("") : "";
  const last = view.last ? `last round: east ${view.last.east}, west ${view.last.west}` : "no round played yet";
  const title = seat === null ? "public view" : `${seat}'s view`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="360" height="112" viewBox="0 0 360 112" role="img" aria-label="duel, ${title}">` +
    `<rect width="360" height="112" fill="#ecfdf5"/>` +
    `<text id="duel-score" x="12" y="22" font-size="16" fill="#064e3b">${score}</text>` +
    `<text x="12" y="42" font-size="12" fill="#065f46">round ${view.round} · ${last}</text>` +
    cards +
    `</svg>`;
}

export default {
  ...duel,
  game: { id: "test/pictured", version: "1", adapter: { id: "test/pictured/reducer", version: "1.0.0" } },
  description: "The duel with a picture of each position (render).",
  render,
};
