// The lobby: create a game, join an open one, watch or replay the others.
import { api, clockText, el, myName, rememberName, rulesText, saveSeat, toast } from "./common.js";
import { dateTime, t, tn } from "./i18n.js";

let options = null; // GET /api/options: the rule options come from the core's table, none is named here

function botLabel(bot) {
  return bot.difficulty ? t("bot: {name}", { name: bot.name }) : t("bot: {name} ({description})", { name: bot.name, description: bot.description });
}

function renderSeatSpecs() {
  const box = document.getElementById("seat-specs");
  const count = Number(document.getElementById("seat-count").value);
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  for (let i = 0; i < count; i++) {
    const select = el(
      "select",
      { name: `seat-${i}`, id: `seat-${i}`, "aria-label": t("seat {seat}", { seat: i + 1 }) },
      el("option", { value: "human" }, i === 0 ? t("you") : t("a person (invite by link)")),
      options.bots.map((b) => el("option", { value: `bot:${b.name}` }, botLabel(b))),
    );
    select.value = previous[i] ?? (i === 0 ? "human" : `bot:${options.default_bot}`);
    box.append(el("div", { class: "seat-spec" }, el("label", { for: `seat-${i}` }, t("Seat {seat}", { seat: i + 1 })), select));
  }
}

/** The seat count: the rule option that the number of seats sets, with its range. */
function renderSeatCount() {
  const opt = options.rules.find((o) => o.set_by_seats);
  const select = document.getElementById("seat-count");
  const counts = [];
  for (let n = opt.minimum; n <= opt.maximum; n++) counts.push(el("option", { value: n }, n));
  select.replaceChildren(...counts);
  select.value = String(opt.default);
  select.title = opt.help;
}

/** One form field per rule option: a select for choices, a number field for a range. */
function ruleInput(opt) {
  const id = `rule-${opt.name}`;
  if (opt.kind === "choice") {
    const labels = opt.choice_labels ?? opt.choices;
    const select = el("select", { id }, opt.choices.map((value, i) => el("option", { value, title: opt.choice_help[i] }, labels[i])));
    select.value = String(opt.default);
    return select;
  }
  return el("input", {
    type: "number", id, step: 1, min: opt.minimum, max: opt.maximum,
    // an optional number left empty is the rule's own number; any other starts at its default
    value: opt.optional ? null : opt.default, required: !opt.optional, placeholder: opt.optional ? t("default") : null,
  });
}

function choiceHelp(opt, input) {
  if (opt.kind !== "choice") return opt.help;
  return t("{help}: {meaning}", { help: opt.help, meaning: opt.choice_help[opt.choices.indexOf(input.value)] ?? "" });
}

function renderRuleOptions() {
  const box = document.getElementById("rule-options");
  for (const opt of options.rules) {
    if (opt.set_by_seats) continue;
    const input = ruleInput(opt);
    const help = el("span", { class: "small muted", id: `rule-${opt.name}-help` }, choiceHelp(opt, input));
    input.addEventListener("change", () => { help.textContent = choiceHelp(opt, input); });
    box.append(el("label", { title: opt.help }, el("span", {}, opt.label), input, help));
  }
}

function readRules() {
  const rules = {};
  for (const opt of options.rules) {
    if (opt.set_by_seats) continue;
    const input = document.getElementById(`rule-${opt.name}`);
    if (opt.kind === "choice") rules[opt.name] = input.value;
    else if (input.value.trim() !== "") rules[opt.name] = Number(input.value);
    // an empty number field sends nothing: the server takes the option's default
  }
  return rules;
}

// the ranges of the server's ClockSpec: checked here too, so that the form can say which field is wrong
const MOVE_SECONDS = [5, 3600];
const GAME_SECONDS = [30, 86400];

/** Show the clock's number fields that the chosen kind of clock uses; the others are disabled, so
 * that the browser does not check a field that is not sent. */
function showClockFields() {
  const kind = document.getElementById("clock-kind").value;
  const uses = { move: kind === "move" || kind === "both", game: kind === "game" || kind === "both" };
  for (const [which, used] of Object.entries(uses)) {
    document.getElementById(`clock-${which}-field`).hidden = !used;
    document.getElementById(which === "move" ? "clock-move-seconds" : "clock-game-minutes").disabled = !used;
  }
}

class FormError extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

/** The create request's clock (CreateGame.clock), or null for no clock; a FormError names a bad field. */
function readClock() {
  const kind = document.getElementById("clock-kind").value;
  if (kind === "none") return null;
  const clock = {};
  if (kind === "move" || kind === "both") {
    const text = document.getElementById("clock-move-seconds").value.trim();
    const seconds = Number(text);
    if (!text || !Number.isInteger(seconds) || seconds < MOVE_SECONDS[0] || seconds > MOVE_SECONDS[1]) {
      throw new FormError("clock-move-seconds", t("Seconds per move: a whole number from {low} to {high}.", { low: MOVE_SECONDS[0], high: MOVE_SECONDS[1] }));
    }
    clock.move_seconds = seconds;
  }
  if (kind === "game" || kind === "both") {
    const text = document.getElementById("clock-game-minutes").value.trim();
    const seconds = Math.round(Number(text) * 60);
    if (!text || !Number.isFinite(seconds) || seconds < GAME_SECONDS[0] || seconds > GAME_SECONDS[1]) {
      throw new FormError(
        "clock-game-minutes",
        t("Minutes per game: from {low} ({low_seconds} s) to {high} ({high_hours} h).", {
          low: GAME_SECONDS[0] / 60, low_seconds: GAME_SECONDS[0], high: GAME_SECONDS[1] / 60, high_hours: GAME_SECONDS[1] / 3600,
        }),
      );
    }
    clock.game_seconds = seconds;
  }
  return clock;
}

async function createGame(event) {
  event.preventDefault();
  const name = document.getElementById("creator-name").value.trim();
  const seats = [...document.querySelectorAll("#seat-specs select")].map((s) =>
    s.value === "human" ? { kind: "human" } : { kind: "bot", bot: s.value.slice(4) },
  );
  const humans = seats.filter((s) => s.kind === "human").length;
  if (humans && !name) {
    toast(t("Type your name first: you take the first person's seat."));
    document.getElementById("creator-name").focus();
    return;
  }
  const body = { name: document.getElementById("game-name").value.trim(), rules: readRules(), seats };
  if (humans) body.creator_name = name;
  try {
    const clock = readClock();
    if (clock) body.clock = clock;
  } catch (err) {
    if (!(err instanceof FormError)) throw err;
    toast(err.message);
    document.getElementById(err.field).focus();
    return;
  }
  const button = document.getElementById("create-button");
  button.disabled = true;
  try {
    const created = await api("/api/games", { method: "POST", body });
    if (created.token) {
      rememberName(name);
      saveSeat(created.game.id, created.seat, created.token);
    }
    location.href = `/games/${encodeURIComponent(created.game.id)}`;
  } catch (err) {
    toast(err.message);
  } finally {
    button.disabled = false;
  }
}

function seatsText(game) {
  return game.seats.map((s) => (s.free ? t("(free)") : s.name)).join(", ");
}

function gameTable(games, kind) {
  if (!games.length) {
    const empty = { open: t("No game is waiting for players. Create one!"), playing: t("Nobody is playing right now."), finished: t("No finished game yet.") }[kind];
    return el("p", { class: "empty" }, empty);
  }
  return el(
    "table",
    { class: "list" },
    el(
      "tbody",
      {},
      games.map((g) => {
        const link = `/games/${encodeURIComponent(g.id)}`;
        let actions;
        if (kind === "open") actions = el("a", { class: "button", href: link }, t("Join"));
        else if (kind === "playing") actions = el("a", { class: "button secondary", href: link }, t("Watch"));
        else if (g.status === "abandoned") actions = el("a", { class: "button secondary", href: link }, t("View"));
        else actions = el("span", {}, el("a", { class: "button secondary", href: `${link}/replay` }, t("Replay")), " ",
          el("a", { href: `/api/games/${encodeURIComponent(g.id)}/record`, download: `coloretto-${g.id}.json` }, t("record")));
        const result = g.totals
          ? ` — ${t("{totals}; won by {winners}", { totals: g.totals.join(" : "), winners: g.winners.map((w) => g.seats[w].name).join(" & ") })}`
          : "";
        const clock = clockText(g.clock);
        return el(
          "tr",
          { dataset: { game: g.id, status: g.status } },
          el(
            "td",
            {},
            el("strong", {}, g.name),
            g.status === "abandoned" ? [" ", el("span", { class: "pill abandoned", title: t("nobody moved for too long: it cannot be finished") }, t("abandoned"))] : null,
            el("div", { class: "small muted" }, rulesText(g.rules_summary)),
            clock ? el("div", { class: "small clock-note" }, t("Clock: {clock}", { clock })) : null,
            el("div", { class: "small" }, seatsText(g), result),
            el("div", { class: "small muted when" }, kind === "open" ? t("created {when}", { when: dateTime(g.created_at) }) : t("last move {when}", { when: dateTime(g.updated_at) })),
          ),
          el(
            "td",
            { class: "small muted" },
            kind === "open" ? tn("{n} free", "{n} free", g.seats.filter((s) => s.free).length) : tn("{n} move", "{n} moves", g.moves),
          ),
          el("td", {}, actions),
        );
      }),
    ),
  );
}

/** The games of one list; abandoned games go with the finished ones (they can be looked at, not replayed). */
async function listed(kind) {
  const { games } = await api(`/api/games?status=${kind}&limit=20`);
  if (kind !== "finished") return games;
  const abandoned = (await api("/api/games?status=abandoned&limit=20")).games;
  const ended = [...games, ...abandoned];
  ended.sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0));
  return ended.slice(0, 20);
}

async function refreshLists() {
  for (const kind of ["open", "playing", "finished"]) {
    try {
      const games = await listed(kind);
      document.getElementById(`${kind}-games`).replaceChildren(gameTable(games, kind));
      document.getElementById(`${kind}-games`).className = "";
    } catch (err) {
      document.getElementById(`${kind}-games`).textContent = err.message;
    }
  }
}

async function main() {
  try {
    options = await api("/api/options");
  } catch (err) {
    toast(err.message);
    return;
  }
  document.getElementById("creator-name").value = myName();
  renderSeatCount();
  renderSeatSpecs();
  renderRuleOptions();
  document.getElementById("seat-count").addEventListener("change", renderSeatSpecs);
  document.getElementById("clock-kind").addEventListener("change", showClockFields);
  showClockFields();
  document.getElementById("create-form").addEventListener("submit", createGame);
  await refreshLists();
  setInterval(refreshLists, 5000);
}

main();
