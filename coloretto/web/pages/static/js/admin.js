// The administrators' page: the reports queue (open or resolved; a message's report with the
// messages around it), hiding and showing a chat message, banning and unbanning an account, ending a
// game, resolving a report, and the audit log of every administrator's action. Every action asks
// for its reason first (a dialog), then says what it did.
import { ApiError, api, el } from "./common.js";
import { dateTime, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const AUDIT_PAGE = 50;
let showing = "open";
let auditOldest = null; // the number of the oldest audit entry shown

const REASONS = {
  spam: t("spam or advertising"),
  abuse: t("insults, harassment or hate"),
  cheating: t("cheating or playing unfairly"),
  name: t("an offensive name"),
  other: t("something else"),
};
const ACTIONS = {
  "create-admin": t("made an administrator"),
  promote: t("promoted to administrator"),
  demote: t("demoted"),
  ban: t("banned"),
  unban: t("unbanned"),
  "hide-message": t("hid a message"),
  "show-message": t("showed a message again"),
  "end-game": t("ended a game"),
  "resolve-report": t("resolved a report"),
  "reset-password": t("made a password reset link"),
};
const VIA = { page: t("admin page"), cli: t("command line") };

function say(message, problem = false) {
  const box = $("admin-status");
  box.textContent = message;
  box.classList.toggle("form-error", problem);
}

// ------------------------------------------------------------------ the reason dialog

/** Ask for an action's reason; the reason, or null when the dialog was cancelled. */
function askReason({ title, label, ok, required = true }) {
  const dialog = $("reason-dialog");
  $("reason-title").textContent = title;
  $("reason-label").textContent = label;
  $("reason-ok").textContent = ok;
  $("reason-text").value = "";
  $("reason-error").hidden = true;
  dialog.showModal();
  $("reason-text").focus();
  return new Promise((resolve) => {
    const submit = (event) => {
      event.preventDefault();
      const reason = $("reason-text").value.trim();
      if (required && !reason) {
        $("reason-error").textContent = t("Give a reason: it is kept in the audit log.");
        $("reason-error").hidden = false;
        $("reason-text").focus();
        return;
      }
      finish(reason);
    };
    const cancel = () => finish(null);
    const finish = (value) => {
      $("reason-form").removeEventListener("submit", submit);
      $("reason-cancel").removeEventListener("click", cancel);
      dialog.removeEventListener("cancel", cancel);
      if (dialog.open) dialog.close();
      resolve(value);
    };
    $("reason-form").addEventListener("submit", submit);
    $("reason-cancel").addEventListener("click", cancel);
    dialog.addEventListener("cancel", cancel);
  });
}

/** Run an administrator's action: its answer said, the queue and the log shown again. */
async function act(path, reason) {
  try {
    const answer = await api(path, { method: "POST", body: { reason } });
    say(answer.message);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    say(err.message, true);
  }
  await Promise.all([loadReports(), loadAudit()]);
}

const actions = {
  async ban(name) {
    const reason = await askReason({ title: t("Ban {name}?", { name }), label: t("Why (the account is told when it tries to log in)"), ok: t("Ban") });
    if (reason !== null) await act(`/api/admin/players/${encodeURIComponent(name)}/ban`, reason);
  },
  async unban(name) {
    const reason = await askReason({ title: t("Unban {name}?", { name }), label: t("Why (optional)"), ok: t("Unban"), required: false });
    if (reason !== null) await act(`/api/admin/players/${encodeURIComponent(name)}/unban`, reason);
  },
  async hide(game, number) {
    const reason = await askReason({ title: t("Hide message {number} of game {game}?", { number, game }), label: t("Why"), ok: t("Hide") });
    if (reason !== null) await act(`/api/admin/games/${encodeURIComponent(game)}/messages/${number}/hide`, reason);
  },
  async show(game, number) {
    const reason = await askReason({ title: t("Show message {number} of game {game} again?", { number, game }), label: t("Why (optional)"), ok: t("Show again"), required: false });
    if (reason !== null) await act(`/api/admin/games/${encodeURIComponent(game)}/messages/${number}/show`, reason);
  },
  async end(game) {
    const reason = await askReason({ title: t("End game {game}?", { game }), label: t("Why (every player of the game sees it)"), ok: t("End the game") });
    if (reason !== null) await act(`/api/admin/games/${encodeURIComponent(game)}/end`, reason);
  },
  async resolve(id) {
    const reason = await askReason({ title: t("Resolve report {number}?", { number: id }), label: t("What was done (optional)"), ok: t("Resolve"), required: false });
    if (reason !== null) await act(`/api/admin/reports/${id}/resolve`, reason);
  },
};

// ------------------------------------------------------------------ the reports

function button(text, onclick, kind = "secondary") {
  return el("button", { type: "button", class: `${kind} small-button`, onclick }, text);
}

function contextList(report) {
  return el(
    "ol",
    { class: "report-context", "aria-label": t("The messages around it") },
    report.context.map((line) =>
      el(
        "li",
        { class: line.reported ? "reported" : null, value: line.number, dataset: { number: line.number } },
        el("strong", {}, line.seat === null ? t("{name} (watching)", { name: line.name }) : line.name),
        ": ",
        el("span", { class: "chat-text" }, line.text),
        line.hidden ? [" ", el("span", { class: "pill abandoned" }, t("hidden"))] : null,
        line.reported ? [" ", el("span", { class: "pill warn" }, t("reported"))] : null,
      ),
    ),
  );
}

function reportCard(report) {
  const reported = report.reported_deleted ? t("deleted player") : report.reported ?? "?";
  const about = report.kind === "message"
    ? t("A message of {name} in game {game} (message {id})", { name: reported, game: report.game, id: `${report.game}:${report.number}` })
    : report.game ? t("The player {name}, in game {game}", { name: reported, game: report.game }) : t("The player {name}", { name: reported });
  const line = report.context.find((l) => l.reported);
  const buttons = [];
  if (report.status === "open") {
    if (line && !line.hidden) buttons.push(button(t("Hide the message"), () => actions.hide(report.game, report.number), "danger"));
    if (line && line.hidden) buttons.push(button(t("Show the message again"), () => actions.show(report.game, report.number)));
    if (report.reported_account && !report.reported_banned) buttons.push(button(t("Ban {name}", { name: reported }), () => actions.ban(report.reported), "danger"));
    if (report.reported_account && report.reported_banned) buttons.push(button(t("Unban {name}", { name: reported }), () => actions.unban(report.reported)));
    if (report.game) buttons.push(button(t("End the game"), () => actions.end(report.game)));
    buttons.push(button(t("Resolve"), () => actions.resolve(report.id), ""));
  }
  return el(
    "article",
    { class: "report", dataset: { report: report.id, status: report.status } },
    el("h3", {}, t("Report {number}: {reason}", { number: report.id, reason: REASONS[report.reason] ?? report.reason })),
    el("p", { class: "small muted" }, t("by {name}, {when}", { name: report.reporter, when: dateTime(report.created_at) })),
    el("p", {}, about, report.game ? [" ", el("a", { href: `/games/${encodeURIComponent(report.game)}` }, t("open the game"))] : null,
      report.reported_banned ? [" ", el("span", { class: "pill abandoned" }, t("banned"))] : null),
    report.text ? el("blockquote", { class: "report-text" }, report.text) : null,
    report.context.length ? contextList(report) : null,
    report.status === "resolved"
      ? el("p", { class: "small" }, t("Resolved {when} by {name}: {note}", { when: dateTime(report.resolved_at), name: report.resolved_by ?? t("command line"), note: report.resolution || "—" }))
      : null,
    buttons.length ? el("p", { class: "actions" }, buttons) : null,
  );
}

async function loadReports() {
  const box = $("reports");
  box.setAttribute("aria-busy", "true");
  try {
    const answer = await api(`/api/admin/reports?status=${showing}`);
    $("open-count").textContent = t("{count} open", { count: answer.open });
    box.replaceChildren(
      ...(answer.reports.length
        ? answer.reports.map(reportCard)
        : [el("p", { class: "empty" }, showing === "open" ? t("No report waits: nothing to do.") : t("No report was resolved yet."))]),
    );
  } catch (err) {
    box.replaceChildren(el("p", { class: "form-error" }, err.message));
  }
  box.setAttribute("aria-busy", "false");
  document.body.dataset.ready = "true";
}

function show(status) {
  showing = status;
  $("show-open").setAttribute("aria-pressed", String(status === "open"));
  $("show-resolved").setAttribute("aria-pressed", String(status === "resolved"));
  loadReports();
}

// ------------------------------------------------------------------ the audit log

async function loadAudit(older = false) {
  const before = older && auditOldest !== null ? `&before=${auditOldest}` : "";
  let entries;
  try {
    entries = (await api(`/api/admin/audit?limit=${AUDIT_PAGE}${before}`)).entries;
  } catch (err) {
    say(err.message, true);
    return;
  }
  const rows = entries.map((e) =>
    el(
      "tr",
      { dataset: { action: e.action } },
      el("td", {}, dateTime(e.at)),
      el("td", {}, e.actor, el("div", { class: "small muted" }, VIA[e.via] ?? e.via)),
      el("td", {}, ACTIONS[e.action] ?? e.action),
      el("td", {}, e.target),
      el("td", {}, e.reason),
    ),
  );
  let table = $("audit").querySelector("table");
  if (!older || !table) {
    const head = [t("when"), t("who"), t("action"), t("on"), t("reason")];
    table = el("table", { class: "list audit" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}));
    $("audit").replaceChildren(entries.length ? table : el("p", { class: "empty" }, t("Nothing yet.")));
  }
  table.querySelector("tbody").append(...rows);
  if (entries.length) auditOldest = entries[entries.length - 1].id;
  $("audit-more").hidden = entries.length < AUDIT_PAGE;
}

// ------------------------------------------------------------------ by hand

function wire() {
  $("show-open").addEventListener("click", () => show("open"));
  $("show-resolved").addEventListener("click", () => show("resolved"));
  $("refresh").addEventListener("click", () => Promise.all([loadReports(), loadAudit()]));
  $("audit-more").addEventListener("click", () => loadAudit(true));
  $("account-action").addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = $("ban-name").value.trim();
    if (!name) return say(t("Type the account's name."), true);
    const which = event.submitter?.value === "unban" ? "unban" : "ban";
    await act(`/api/admin/players/${encodeURIComponent(name)}/${which}`, $("ban-reason").value);
  });
  $("message-action").addEventListener("submit", async (event) => {
    event.preventDefault();
    const found = /^([A-Za-z0-9_-]{1,16}):([1-9][0-9]*)$/.exec($("message-id").value.trim());
    if (!found) return say(t("A message is GAME:NUMBER, as the reports show it (Ab3xYz:7)."), true);
    const which = event.submitter?.value === "show" ? "show" : "hide";
    await act(`/api/admin/games/${encodeURIComponent(found[1])}/messages/${found[2]}/${which}`, $("message-reason").value);
  });
  $("game-action").addEventListener("submit", async (event) => {
    event.preventDefault();
    const game = $("game-id").value.trim();
    if (!game) return say(t("Type the game's id."), true);
    await act(`/api/admin/games/${encodeURIComponent(game)}/end`, $("game-reason").value);
  });
}

wire();
loadReports();
loadAudit();
