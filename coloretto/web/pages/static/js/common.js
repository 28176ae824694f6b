// Shared helpers: DOM building, the JSON API, seat tokens, messages.
import { t, tn } from "./i18n.js";

/** Build an element: el("div", {class: "x", onclick: f, style: {left: "2px"}}, child, "text", ...).
 * A style is an object set through the element's style properties, never a style attribute: the
 * site's Content-Security-Policy refuses inline style attributes. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "style") Object.assign(node.style, value);
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
  /** ``retryAfter``: the seconds the server said to wait (its Retry-After), else null. */
  constructor(code, message, status, retryAfter = null) {
    super(message);
    this.code = code;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** The page's security token: the server's coloretto_csrf cookie, which only this site's pages can read. */
export function csrfToken() {
  const found = document.cookie.split(";").map((c) => c.trim()).find((c) => c.startsWith("coloretto_csrf="));
  return found ? decodeURIComponent(found.slice("coloretto_csrf=".length)) : "";
}

/** Call the JSON API; throws ApiError with the server's message. A request that changes
 * something carries the security token (the server refuses it without, when cookies come along). */
export async function api(path, { method = "GET", body, token } = {}) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers["Authorization"] = `Bearer ${token}`;
  if (method !== "GET" && method !== "HEAD") {
    const csrf = csrfToken();
    if (csrf) headers["X-CSRF-Token"] = csrf;
  }
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError("network", t("the server cannot be reached"), 0);
  }
  let data = null;
  try { data = await response.json(); } catch { /* not JSON */ }
  if (!response.ok) {
    const wait = Number(response.headers.get("Retry-After"));
    throw new ApiError(
      data?.error || "http",
      data?.message || t("the server answered {status}", { status: String(response.status) }),
      response.status,
      Number.isFinite(wait) && wait > 0 ? wait : null,
    );
  }
  return data;
}

// ---- seat tokens: one per game, kept in localStorage (the token *is* the seat)

const seatKey = (gameId) => `coloretto.seat.${gameId}`;

export function loadSeat(gameId) {
  try { return JSON.parse(localStorage.getItem(seatKey(gameId)) || "null"); } catch { return null; }
}
/** ``account``: the logged-in person the seat is also theirs of (forgotten here when they log out). */
export function saveSeat(gameId, seat, token, account = null) {
  saveSeatRecord(gameId, { seat, token, at: Date.now(), account });
}
/** A seat's whole record: ``over`` marks a game that ended (the lobby looks it up no more). */
export function saveSeatRecord(gameId, record) {
  localStorage.setItem(seatKey(gameId), JSON.stringify(record));
}
export function forgetSeat(gameId) { localStorage.removeItem(seatKey(gameId)); }

/** Every seat this browser keeps: [{game, seat, token, at, account}], the newest first (``at`` is
 * when it was saved; a seat saved before that was kept counts as oldest). */
export function savedSeats() {
  const seats = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (!key || !key.startsWith("coloretto.seat.")) continue;
    try {
      const saved = JSON.parse(localStorage.getItem(key));
      if (saved && saved.token) seats.push({ game: key.slice("coloretto.seat.".length), at: 0, account: null, ...saved });
    } catch { /* not ours to read */ }
  }
  return seats.sort((a, b) => b.at - a.at);
}

/** Logging out: the seat tokens this browser got as the account's go too (the account keeps the seats). */
export function forgetAccountSeats(account) {
  for (const saved of savedSeats()) if (saved.account === account) forgetSeat(saved.game);
}
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

// ---- clocks

/** A length of time as a table says it: "30 s", "2 min", "2.5 min", "1 h". */
export function duration(seconds) {
  if (seconds >= 3600 && seconds % 3600 === 0) return t("{hours} h", { hours: seconds / 3600 });
  if (seconds >= 60 && seconds % 30 === 0) return t("{minutes} min", { minutes: seconds / 60 });
  return t("{seconds} s", { seconds });
}

/** A table's clock (GameSummary.clock): "30 s a move", "10 min a game", or both; "" when untimed. */
export function clockText(clock) {
  if (!clock) return "";
  const parts = [];
  if (clock.move_seconds) parts.push(t("{time} a move", { time: duration(clock.move_seconds) }));
  if (clock.game_seconds) parts.push(t("{time} a game", { time: duration(clock.game_seconds) }));
  return parts.join(", ");
}

/** Time left on a running clock: "7 s" under a minute, "4:05" or "1:02:03" above. Whole seconds
 * are rounded up, so a clock shows 0 only once its time is really out. */
export function timeLeft(seconds) {
  const whole = Math.max(0, Math.ceil(seconds));
  if (whole < 60) return t("{seconds} s", { seconds: whole });
  const s = String(whole % 60).padStart(2, "0");
  const m = Math.floor(whole / 60) % 60;
  const h = Math.floor(whole / 3600);
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

// ---- a game's rules in words

/** A game's rules in one line, worded here from what the server says the line holds
 * (GameSummary.rules_summary: the core's Rules.summary(), the players, edition and table, then
 * each option that is not its default), so that no page keeps a copy of the defaults. */
export function rulesText(summary) {
  const editions = { classic: t("classic edition"), modern: t("modern edition"), "playing-cards": t("playing-cards edition") };
  const tables = { brown: t("brown table"), violet: t("violet table") };
  const words = {
    players: (n) => tn("{n} player", "{n} players", n),
    edition: (value) => editions[value] ?? value,
    table: (value) => tables[value] ?? value,
    joker_timing: () => t("jokers named on take"),
    round_starter: () => t("next player starts a round"),
    plus_colours: () => t("most-cards colours score plus"),
    tie_break: () => t("tie-break fewer-minus"),
    starting_colours: () => t("starting colours chosen"),
    cards_under_last_round: (n) => t("{n} under the last-round card", { n }),
    match_games: (n) => tn("match of {n} game", "match of {n} games", n),
  };
  return summary.map(({ option, value }) => (words[option] ? words[option](value) : `${option} ${value}`)).join(", ");
}
