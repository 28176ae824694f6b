// Reporting a chat message or a player to the site's administrators (a reason from the list, and the
// person's own words), and blocking a player: both for a logged-in person. The dialog is the
// template's (report_dialog.html), filled in here for what is reported.
import { ApiError, api, toast } from "./common.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
let target = null; // what the open dialog reports: {kind, game, number, player}

function showError(message) {
  $("report-error").textContent = message;
  $("report-error").hidden = !message;
}

/** Open the report dialog for a message ({kind: "message", game, number}) or a player ({kind:
 * "player", player, game?}); ``about`` says what is reported, in words. */
export function openReport({ kind, game = null, number = null, player = null, about = "" }) {
  const dialog = $("report-dialog");
  if (!dialog) return;
  target = { kind, game, number, player };
  $("report-about").textContent = about;
  $("report-text").value = "";
  $("report-reason").selectedIndex = 0;
  showError("");
  $("report-send").disabled = false;
  dialog.showModal();
  $("report-reason").focus();
}

async function send(event) {
  event.preventDefault();
  if (!target) return;
  const body = { ...target, reason: $("report-reason").value, text: $("report-text").value };
  for (const key of ["game", "number", "player"]) if (body[key] === null) delete body[key];
  if (body.reason === "other" && !body.text.trim()) {
    showError(t("Say what is wrong in your own words."));
    $("report-text").focus();
    return;
  }
  $("report-send").disabled = true;
  try {
    const answer = await api("/api/reports", { method: "POST", body });
    $("report-dialog").close();
    toast(answer.message, "info");
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    showError(err.message);
    $("report-send").disabled = false;
  }
}

/** Block a player: their chat is never sent to this person again (until they unblock them, on their
 * account page). */
export async function blockPlayer(name) {
  try {
    await api("/api/account/blocks", { method: "POST", body: { player: name } });
    toast(t("You no longer see {name}'s messages. You can unblock them on your account page.", { name }), "info");
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    toast(err.message);
  }
}

/** What a table's chat offers on each line (chat.js's ``actions``): a logged-in person reports, or
 * blocks, what others said, never their own. ``user()``: the account's name or null; ``seat()``:
 * the seat this page plays, or null. */
export function chatActions({ game, user, seat }) {
  const mine = (m) => m.user === user() || (m.user === null && m.seat !== null && m.seat === seat());
  return {
    canReport: (m) => user() !== null && !mine(m),
    canBlock: (m) => user() !== null && m.user !== null && m.user !== user(),
    report: (m) => openReport({ kind: "message", game, number: m.number, about: t("{name}: “{text}”", { name: m.name, text: m.text }) }),
    block: (m) => blockPlayer(m.user),
  };
}

const form = $("report-form");
if (form) {
  form.addEventListener("submit", send);
  $("report-cancel").addEventListener("click", () => $("report-dialog").close());
}
