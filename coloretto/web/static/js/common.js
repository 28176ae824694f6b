// Shared helpers: DOM building, the JSON API, seat tokens, messages.

/** Build an element: el("div", {class: "x", onclick: f}, child, "text", ...). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export class ApiError extends Error {
  constructor(code, message, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/** Call the JSON API; throws ApiError with the server's message. */
export async function api(path, { method = "GET", body, token } = {}) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers["Authorization"] = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError("network", "the server cannot be reached", 0);
  }
  let data = null;
  try { data = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) {
    throw new ApiError(data?.error || "http", data?.message || `the server answered ${response.status}`, response.status);
  }
  return data;
}

// ---- seat tokens: one per game, kept in localStorage (the token *is* the seat)

const seatKey = (gameId) => `coloretto.seat.${gameId}`;

export function loadSeat(gameId) {
  try { return JSON.parse(localStorage.getItem(seatKey(gameId)) || "null"); } catch { return null; }
}
export function saveSeat(gameId, seat, token) {
  localStorage.setItem(seatKey(gameId), JSON.stringify({ seat, token }));
}
export function forgetSeat(gameId) { localStorage.removeItem(seatKey(gameId)); }
export function myName() { return localStorage.getItem("coloretto.name") || ""; }
export function rememberName(name) { localStorage.setItem("coloretto.name", name); }

// ---- messages

let toastTimer = null;
export function toast(message, kind = "error") {
  let box = document.getElementById("toast");
  if (!box) {
    box = el("div", { id: "toast", class: "toast", role: "alert", "aria-live": "assertive" });
    document.body.append(box);
  }
  box.textContent = message;
  box.className = `toast ${kind}`;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 4500);
}

export function gameIdFromPath() {
  const parts = location.pathname.split("/").filter(Boolean);
  return decodeURIComponent(parts[1] || "");
}
