// The host's JSON API as the pages use it. Tokens live in sessionStorage
// (per browser tab, gone when it closes) and travel only in the
// Authorization header, never in a URL the server sees.

const PREFIX = "gaos.token.";

/** The stored token of `scope` ("operator" or a session id), or "". */
export function storedToken(scope) {
  return sessionStorage.getItem(PREFIX + scope) || "";
}

export function storeToken(scope, token) {
  if (token) sessionStorage.setItem(PREFIX + scope, token.trim());
  else sessionStorage.removeItem(PREFIX + scope);
}

/**
 * Reads `#token=…&seat=…` from the URL fragment (which browsers never send to
 * the server), stores the token under `scope`, and removes the fragment from
 * the address bar and history so it is not left on screen.
 */
export function takeFragment(scope) {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  if (token) {
    storeToken(scope, token);
    history.replaceState(null, "", location.pathname + location.search);
  }
  for (const [key, value] of params) {
    if (key !== "token") sessionStorage.setItem(`gaos.${key}.${scope}`, value);
  }
  return token || storedToken(scope);
}

export function storedParam(scope, key) {
  return sessionStorage.getItem(`gaos.${key}.${scope}`) || "";
}

/** An error answered by the host (`{"error","code"}`) or met on the way. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Every answer the page received, for tests that audit what a seat was sent. */
export const received = [];
window.__gaosReceived = received;

/** Calls the host; answers the parsed JSON (or text) or throws an ApiError. */
export async function api(path, { token, method = "GET", body, text = false } = {}) {
  const headers = { accept: text ? "*/*" : "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = typeof body === "string" ? "application/jsonl" : "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      cache: "no-store",
      redirect: "error",
    });
  } catch (e) {
    throw new ApiError(0, "network", `The host did not answer (${e.message}).`);
  }
  const raw = await response.text();
  received.push(raw);
  if (!response.ok) {
    let code = "http_" + response.status;
    let message = raw || response.statusText;
    try {
      const parsed = JSON.parse(raw);
      code = parsed.code || code;
      message = parsed.error || message;
    } catch {}
    throw new ApiError(response.status, code, message);
  }
  if (text) return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw new ApiError(response.status, "not_json", "The host answered something that is not JSON.");
  }
}

const WORDS = {
  unauthorized: "The token was not accepted. Check it and enter it again.",
  forbidden: "This token may not do that.",
  stale_tick: "The game moved on before your move arrived; the view is refreshed, try again.",
  illegal_command: "That move is not legal now.",
  invalid_submission: "That move is not well formed for this game.",
  conflicting_intent: "You already submitted a move for this turn.",
  session_finalized: "The session is finalized; no more moves are taken.",
  not_terminal: "The game has not finished yet.",
  lease_expired: "The controller lease of this seat lapsed.",
  network: "The host did not answer; check that it is running.",
};

/** An error in words a person can act on, with the host's own message kept. */
export function describe(error) {
  if (!(error instanceof ApiError)) return String(error && error.message ? error.message : error);
  const words = WORDS[error.code];
  return words ? `${words} (${error.code}: ${error.message})` : `${error.message} (${error.code}, HTTP ${error.status})`;
}

let submissionCounter = 0;

/** A CommandSubmission for `command` at the cursor of the envelope `tick`. */
export function submission(envelope, seat, command) {
  submissionCounter += 1;
  return {
    protocol: "gaos.ticks",
    protocolVersion: "1.0",
    sessionId: envelope.sessionId,
    tickId: envelope.tickId,
    revision: envelope.revision,
    participantId: seat,
    submissionId: `${seat}:${envelope.tickId}:web-${Date.now().toString(36)}-${submissionCounter}`,
    command,
  };
}

export function sessionPath(id, rest = "") {
  return `/v1/sessions/${encodeURIComponent(id)}${rest}`;
}

/** The session id of a `/sessions/{id}[/…]` page. */
export function pageSessionId() {
  const match = location.pathname.match(/^\/sessions\/([^/]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}
