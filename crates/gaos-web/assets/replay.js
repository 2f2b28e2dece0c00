// `/replay`: open a replay (file picker, drag and drop, a finished
// session's via `#session=ID`, or a file this host serves via `#src=PATH`,
// e.g. a benchmark episode from /bench/), have the host re-simulate it
// (POST /v1/replays/frames) and step through the frames with a scrubber and
// play/pause: the public view, each seat's view, the inputs of each step and
// the verifier's verdict.

import { api, sessionPath, storedToken, storeToken } from "./api.js";
import { showPicture } from "./picture.js";
import { renderView } from "./render.js";
import { h, mount, showError, tokenForm } from "./ui.js";

const SCOPE = "replay";
let answer = null;
let level = 0;
let step = 0;
let timer = null;

const status = h("p", { id: "status", role: "status", class: "status" });
const verdict = h("p", { id: "verdict", class: "verdict" });
const scrubber = h("input", { id: "scrubber", class: "scrubber", type: "range", min: 0, max: 0, value: 0, "aria-label": "Step" });
const playButton = h("button", { type: "button", id: "play-pause" }, "Play");
const prevButton = h("button", { type: "button", id: "step-back" }, "Previous step");
const nextButton = h("button", { type: "button", id: "step-forward" }, "Next step");
const levelSelect = h("select", { id: "level" });
const inputs = h("ul", { id: "inputs" });
const publicView = h("div", { id: "public-view" });
const seatViews = h("div", { id: "seat-views" });

function token() {
  const params = new URLSearchParams(location.hash.slice(1));
  const session = params.get("session");
  return storedToken(SCOPE) || (session && (storedToken(`watch:${session}`) || storedToken(`play:${session}`))) || storedToken("operator");
}

function start() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("token")) {
    storeToken(SCOPE, params.get("token"));
    params.delete("token");
    history.replaceState(null, "", location.pathname + (params.toString() ? "#" + params : ""));
  }
  if (!token()) {
    mount(h("h1", {}, "Replay viewer"), tokenForm("Token", "Any token of this host (operator, seat or spectator): the host re-simulates the replay.", (t) => (storeToken(SCOPE, t), start())));
    return;
  }
  const file = h("input", { id: "replay-file", type: "file", accept: ".jsonl,.gaos-replay.jsonl,application/jsonl" });
  file.addEventListener("change", () => file.files[0] && file.files[0].text().then(load));
  const drop = h("div", { class: "drop", id: "drop" }, h("label", { for: "replay-file" }, "Open a .gaos-replay.jsonl file"), " ", file, h("p", { class: "muted" }, "or drop it here"));
  drop.addEventListener("dragover", (e) => (e.preventDefault(), drop.classList.add("over")));
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const f = e.dataTransfer.files[0];
    if (f) f.text().then(load);
  });
  mount(
    h("h1", {}, "Replay viewer"),
    drop,
    status,
    verdict,
    h("div", { class: "row" }, h("label", { for: "level" }, "Level"), levelSelect, prevButton, playButton, nextButton),
    scrubber,
    h("div", { class: "columns" },
      h("section", { "aria-labelledby": "public-title" }, h("h2", { id: "public-title" }, "Public view"), publicView),
      h("section", { "aria-labelledby": "inputs-title" }, h("h2", { id: "inputs-title" }, "Inputs of this step"), inputs)),
    h("section", { "aria-labelledby": "seats-title" }, h("h2", { id: "seats-title" }, "Each seat's view"), seatViews),
  );
  const session = params.get("session");
  if (session) {
    status.textContent = `Loading the replay of session ${session}…`;
    api(sessionPath(session, "/replay"), { token: storedToken(`watch:${session}`) || storedToken(`play:${session}`) || token(), text: true })
      .then(load)
      .catch(showError);
  } else if (params.get("src") && params.get("src").startsWith("/") && !params.get("src").startsWith("//")) {
    // Only a path of this host: the page connects nowhere else.
    const src = params.get("src");
    status.textContent = `Loading ${src}…`;
    api(src, { text: true }).then(load).catch(showError);
  } else {
    status.textContent = "Open a replay to step through it.";
  }
}

async function load(text) {
  try {
    answer = await api("/v1/replays/frames", { token: token(), method: "POST", body: text });
    showError(null);
  } catch (e) {
    showError(e);
    return;
  }
  const ok = answer.verdict === "accepted-unsigned";
  verdict.className = `verdict ${ok ? "ok" : "bad"}`;
  const cut = answer.truncated ? " (the frames stop early: this host answers a bounded number of frames per replay)" : "";
  verdict.textContent = `Verification: ${answer.verdict}${answer.problems.length ? " — " + answer.problems.join("; ") : ""}${cut}`;
  levelSelect.replaceChildren(...answer.levels.map((l, i) => h("option", { value: i }, `${l.id} (seed ${l.seed})`)));
  select(0, 0);
}

function frames() {
  return answer ? answer.levels[level].frames : [];
}

function select(nextLevel, nextStep) {
  if (!answer) return;
  level = nextLevel;
  const all = frames();
  step = Math.max(0, Math.min(nextStep, all.length - 1));
  const frame = all[step];
  const before = step > 0 ? all[step - 1] : null;
  scrubber.max = String(all.length - 1);
  scrubber.value = String(step);
  scrubber.setAttribute("aria-valuetext", `step ${step} of ${all.length - 1}`);
  levelSelect.value = String(level);
  status.textContent = `${answer.game} · step ${step} of ${all.length - 1}${frame.tick != null ? ` · tick ${frame.tick}` : ""}${frame.public && frame.public.status ? ` · ${frame.public.status}` : ""}`;
  publicView.replaceChildren(renderView(frame.public, { previous: before ? before.public : undefined }));
  showPicture(publicView, { game: answer.game, view: frame.public, token: token() });
  inputs.replaceChildren(...(frame.inputs.length ? frame.inputs.map((i) => h("li", {}, `${i.seat || "system"}: ${i.command || JSON.stringify(i.action)}`)) : [h("li", { class: "muted" }, step === 0 ? "The level's start." : "No inputs (an empty tick).")]));
  seatViews.replaceChildren(...Object.entries(frame.seats || {}).map(([seat, view]) =>
    h("details", { class: "card" }, h("summary", {}, `Seat ${seat}`), renderView(view, { seat, previous: before && before.seats ? before.seats[seat] : undefined }))));
  prevButton.disabled = step === 0;
  nextButton.disabled = step === all.length - 1;
  if (step === all.length - 1) pause();
}

function pause() {
  if (timer) clearInterval(timer);
  timer = null;
  playButton.textContent = "Play";
}

playButton.addEventListener("click", () => {
  if (timer) return pause();
  if (step === frames().length - 1) select(level, 0);
  playButton.textContent = "Pause";
  timer = setInterval(() => select(level, step + 1), 700);
});
prevButton.addEventListener("click", () => (pause(), select(level, step - 1)));
nextButton.addEventListener("click", () => (pause(), select(level, step + 1)));
scrubber.addEventListener("input", () => (pause(), select(level, Number(scrubber.value))));
levelSelect.addEventListener("change", () => (pause(), select(Number(levelSelect.value), 0)));
document.addEventListener("keydown", (e) => {
  if (!answer || (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName) && e.target !== scrubber)) return;
  if (e.key === "ArrowRight" && e.target !== scrubber) nextButton.click();
  else if (e.key === "ArrowLeft" && e.target !== scrubber) prevButton.click();
});

start();
