// The table's chat: messages shown as text only (never as markup), each with its speaker and time;
// the server's errors (too long, too fast) said under the box; a mute that this browser
// remembers: a muted chat shows no message, only how many came since, until it is unmuted; and,
// for a logged-in person, a message reported to the administrators or its speaker blocked (the
// server then sends none of their messages again). Messages a moderator hides are taken away.
import { el } from "./common.js";
import { lang, t, tn } from "./i18n.js";

const MUTED_KEY = "coloretto.chat.muted";
/** Error codes the server answers a chat message with: shown in the chat, not as a toast. */
const CHAT_ERRORS = new Set(["bad_chat", "rate_limited", "login_required", "too_large", "banned"]);

const time = new Intl.DateTimeFormat(lang, { hour: "2-digit", minute: "2-digit" });

function storedMuted() {
  try { return localStorage.getItem(MUTED_KEY) === "1"; } catch { return false; }
}

/**
 * The chat panel of the table page, on the template's elements. ``send(text)`` sends a message and
 * says whether it could (the socket open). ``limit`` is the longest message the server takes.
 * ``actions``: ``canReport(message)``, ``canBlock(message)``, ``report(message)``, ``block(message)``.
 */
export function createChat({ send, limit = 300, actions = null }) {
  const $ = (id) => document.getElementById(id);
  const list = $("chat-messages");
  const form = $("chat-form");
  const input = $("chat-input");
  const seen = new Set(); // message numbers shown or counted: one the server sends twice (history and live) once
  let muted = storedMuted();
  let unread = 0;
  let pending = null; // the text sent and not yet answered: an error gives it back to the box
  let maxChars = limit;

  function line(message) {
    const at = new Date(message.at);
    const who = message.seat === null || message.seat === undefined
      ? t("{name} (watching)", { name: message.name })
      : message.name;
    // textContent only: whatever a person typed is shown as the characters they typed
    return el(
      "li",
      { class: "chat-line", dataset: { number: message.number, seat: message.seat ?? "" } },
      Number.isNaN(at.getTime()) ? null : el("time", { class: "chat-time small muted", datetime: message.at }, time.format(at)),
      " ",
      el("strong", { class: "chat-name" }, who),
      el("span", { class: "visually-hidden" }, ":"),
      " ",
      el("span", { class: "chat-text" }, message.text),
      lineActions(message, who),
    );
  }

  /** Report and Block, for a message someone else said (a logged-in person only). */
  function lineActions(message, who) {
    if (!actions) return null;
    const buttons = [];
    if (actions.canReport(message)) {
      buttons.push(el("button", { type: "button", class: "linkish chat-report", "aria-label": t("Report {name}'s message", { name: who }), onclick: () => actions.report(message) }, t("Report")));
    }
    if (actions.canBlock(message)) {
      buttons.push(el("button", { type: "button", class: "linkish chat-block", "aria-label": t("Block {name}", { name: message.user }), onclick: () => actions.block(message) }, t("Block")));
    }
    return buttons.length ? el("span", { class: "chat-actions small" }, ...buttons) : null;
  }

  function showMuted() {
    list.hidden = muted;
    list.setAttribute("aria-live", muted ? "off" : "polite");
    $("chat-mute").setAttribute("aria-pressed", String(muted));
    $("chat-mute").textContent = muted ? t("Unmute") : t("Mute");
    $("chat-mute").title = muted ? t("show the chat again") : t("hide the chat's messages; this browser remembers it");
    $("chat-unread").hidden = !muted || unread === 0;
    $("chat-unread").textContent = tn("{n} unread", "{n} unread", unread);
    $("chat-muted-note").hidden = !muted;
    $("chat-muted-note").textContent = unread
      ? tn("The chat is muted: {n} message came since.", "The chat is muted: {n} messages came since.", unread)
      : t("The chat is muted.");
  }

  function setMuted(on) {
    muted = on;
    try {
      if (on) localStorage.setItem(MUTED_KEY, "1");
      else localStorage.removeItem(MUTED_KEY);
    } catch { /* private browsing: muted for this page only */ }
    if (!on) {
      unread = 0;
      list.scrollTop = list.scrollHeight;
    }
    showMuted();
  }

  function countText() {
    const length = input.value.trim().length;
    const over = length > maxChars;
    $("chat-count").textContent = over || length > maxChars - 40 ? t("{count} of {most} characters", { count: length, most: maxChars }) : "";
    $("chat-count").classList.toggle("over", over);
  }

  function error(message) {
    $("chat-error").textContent = message;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value;
    if (!text.trim()) return;
    error("");
    if (!send(text)) {
      error(t("not connected: reconnecting…"));
      return;
    }
    pending = text;
    input.value = "";
    countText();
  });
  input.addEventListener("input", countText);
  $("chat-mute").addEventListener("click", () => setMuted(!muted));
  showMuted();

  return {
    /** A ``chat`` message of the server: its messages, oldest first; history ones are not "new". */
    receive(msg) {
      const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
      for (const message of msg.messages) {
        if (seen.has(message.number)) continue;
        seen.add(message.number);
        const node = line(message);
        // in number order, whatever order they came in
        const after = [...list.children].find((li) => Number(li.dataset.number) > message.number);
        list.insertBefore(node, after ?? null);
        if (!msg.history && muted) unread += 1;
      }
      if (pending !== null && !msg.history) pending = null;
      if (atBottom || msg.history) list.scrollTop = list.scrollHeight;
      showMuted();
    },
    /** Messages taken back (a moderator hid them, their account was deleted or blocked). */
    remove(numbers) {
      for (const number of numbers) {
        seen.delete(number);
        list.querySelector(`li[data-number="${Number(number)}"]`)?.remove();
      }
    },
    /** A server error: the chat's own ones are said here (and the text given back); true if it was. */
    error(code, message) {
      if (pending === null || !CHAT_ERRORS.has(code)) return false;
      error(message);
      if (!input.value) input.value = pending;
      pending = null;
      countText();
      return true;
    },
    /** Who may chat: a player, or a logged-in spectator; ``connected``: the socket is open. */
    access({ canChat, connected, loggedIn }) {
      form.hidden = !canChat;
      $("chat-note").hidden = canChat;
      $("chat-note").textContent = canChat ? "" : loggedIn ? "" : t("Players and logged-in spectators can chat: log in to chat.");
      $("chat-send").disabled = !connected;
      if (!connected) pending = null;
    },
    setLimit(most) {
      maxChars = most;
      countText();
    },
    get muted() { return muted; },
  };
}
