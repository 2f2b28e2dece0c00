// Server-sent events over fetch(): EventSource cannot send an Authorization
// header, and tokens must not go in URLs. A dropped stream is reopened with a
// growing delay, and `onDrop` lets the page fetch a snapshot meanwhile.

import { received } from "./api.js";

/**
 * Opens `path` as an event stream with `token`; calls `onEvent(name, data)`
 * per event. Answers `{ close() }`.
 */
export function openStream(path, token, { onEvent, onOpen, onDrop }) {
  let closed = false;
  let controller = null;
  let delay = 250;

  async function run() {
    while (!closed) {
      controller = new AbortController();
      try {
        const response = await fetch(path, {
          headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
          signal: controller.signal,
          cache: "no-store",
        });
        if (!response.ok) {
          const body = await response.text();
          received.push(body);
          throw new Error(`stream answered HTTP ${response.status}: ${body}`);
        }
        delay = 250;
        if (onOpen) onOpen();
        await readEvents(response.body, onEvent);
      } catch (e) {
        if (closed) return;
        if (onDrop) onDrop(e);
      }
      if (closed) return;
      if (onDrop) onDrop(new Error("stream ended"));
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5000);
    }
  }
  run();
  // A page that is left (reload, navigation, the back-forward cache) lets go
  // of its stream at once: a browser opens few connections per host, and a
  // stream held by a page being unloaded would keep the next page's requests
  // waiting. A page restored from the cache reopens it through the loop.
  addEventListener("pagehide", () => {
    if (controller) controller.abort();
  });
  return {
    close() {
      closed = true;
      if (controller) controller.abort();
    },
  };
}

async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") name = text;
        else if (field === "data") data.push(text);
      }
      if (data.length) {
        const joined = data.join("\n");
        received.push(joined);
        onEvent(name, joined);
      }
    }
  }
}
