// Small DOM helpers shared by the pages: an element builder (text is always
// set as text, never parsed as HTML), the alert region and the token form.

import { describe } from "./api.js";

/** `h("button", {type: "button", onclick}, "Play")`: attributes, then children. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the page's main content. */
export function mount(...children) {
  const main = document.getElementById("main");
  main.replaceChildren(...children.flat());
  return main;
}

/** Shows an error in words in the `role="alert"` region (or clears it). */
export function showError(error) {
  const alert = document.getElementById("alert");
  if (!error) {
    alert.hidden = true;
    alert.textContent = "";
    return;
  }
  alert.textContent = describe(error);
  alert.hidden = false;
}

/** A form asking for a token; calls `onToken(token)` on submit. */
export function tokenForm(label, hint, onToken) {
  const input = h("input", { id: "token-input", type: "password", autocomplete: "off", spellcheck: "false", required: true });
  const form = h(
    "form",
    { class: "card token-form", onsubmit: (e) => (e.preventDefault(), onToken(input.value.trim())) },
    h("label", { for: "token-input" }, label),
    h("p", { class: "muted" }, hint),
    h("div", { class: "row" }, input, h("button", { type: "submit" }, "Use token")),
  );
  return form;
}

/** A button that copies `text` and says so. */
export function copyButton(label, text) {
  const button = h("button", { type: "button", class: "small" }, label);
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed: select the text";
    }
    setTimeout(() => (button.textContent = label), 1500);
  });
  return button;
}

export function formatTime(ms) {
  if (typeof ms !== "number") return "";
  return new Date(ms).toLocaleString();
}
