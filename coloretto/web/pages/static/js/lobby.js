// The lobby: your own games first (back to your seat, cancel one still waiting), create a game
// (rated, private), join an open one, watch or replay the others.
import { api, clockText, el, myName, rememberName, rulesText, savedSeats, saveSeat, saveSeatRecord, toast } from "./common.js";
import { dateTime, t, tn } from "./i18n.js";
import { seatName } from "./render.js";

let options = null; // GET /api/options: the rule options come from the core's table, none is named here
/** The logged-in person's name (the server wrote it in the header), or null for a guest. */
const user = document.getElementById("account-bar")?.dataset.user || null;
const REFRESH_MS = 5000;
// a seat this browser saved longer ago than this is not looked up for "Your games" (a game waits
// 30 minutes for players; one in progress for a day is rare): each lookup is a request
const SAVED_SEAT_DAYS = 2;
const SAVED_SEATS_LOOKED_UP = 10;

function rated() {
  return Boolean(document.getElementById("rated")?.checked);
}

function botLabel(bot) {
  return bot.difficulty ? t("bot: {name}", { name: bot.name }) : t("bot: {name} ({description})", { name: bot.name, description: bot.description });
}

/** The seats' selects: a rated table offers only the bots that are difficulty levels. */
function renderSeatSpecs() {
  const box = document.getElementById("seat-specs");
  const count = Number(document.getElementById("seat-count").value);
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  const focused = document.activeElement?.id;
  const ratedTable = rated();
  const levelBot = options.bots.find((b) => b.difficulty && b.name === options.default_bot) ?? options.bots.find((b) => b.difficulty);
  box.replaceChildren();
  for (let i = 0; i < count; i++) {
    const person = ratedTable ? t("a logged-in person (invite by link)") : t("a person (invite by link)");
    const select = el(
      "select",
      { name: `seat-${i}`, id: `seat-${i}` },
      el("option", { value: "human" }, i === 0 ? t("you") : person),
      options.bots.map((b) => el("option", { value: `bot:${b.name}`, disabled: ratedTable && !b.difficulty }, botLabel(b))),
    );
    let value = previous[i] ?? (i === 0 ? "human" : `bot:${options.default_bot}`);
    const chosen = options.bots.find((b) => `bot:${b.name}` === value);
    if (ratedTable && chosen && !chosen.difficulty && levelBot) value = `bot:${levelBot.name}`;
    select.value = value;
    box.append(el("div", { class: "seat-spec" }, el("label", { for: `seat-${i}` }, t("Seat {seat}", { seat: i + 1 })), select));
  }
  if (focused && focused.startsWith("seat-") && document.getElementById(focused)) document.getElementById(focused).focus();
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
  // logged in, you sit under your account's name: the server takes it from your session
  const name = user ?? document.getElementById("creator-name").value.trim();
  const seats = [...document.querySelectorAll("#seat-specs select")].map((s) =>
    s.value === "human" ? { kind: "human" } : { kind: "bot", bot: s.value.slice(4) },
  );
  const humans = seats.filter((s) => s.kind === "human").length;
  if (humans && !name) {
    toast(t("Type your name first: you take the first person's seat."));
    document.getElementById("creator-name").focus();
    return;
  }
  const body = {
    name: document.getElementById("game-name").value.trim(),
    rules: readRules(),
    seats,
    rated: rated(),
    private: document.getElementById("private").checked,
  };
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
      if (!user) rememberName(name); // a guest's name is typed once; an account's is its own
      saveSeat(created.game.id, created.seat, created.token, user);
    }
    location.href = `/games/${encodeURIComponent(created.game.id)}`;
  } catch (err) {
    toast(err.message);
  } finally {
    button.disabled = false;
  }
}

function seatsText(game) {
  return game.seats.map((s) => (s.free ? (s.reserved ? t("(kept for a rematch)") : t("(free)")) : seatName(s))).join(", ");
}

/** The pills of a game's name: rated, private, abandoned, ended by a moderator. */
function tags(g) {
  const out = [];
  if (g.rated) out.push(el("span", { class: "pill rated", title: t("the ratings move at the end; only logged-in people sit at it") }, t("rated")));
  if (g.private) out.push(el("span", { class: "pill private", title: t("not listed: reached by its invite link only") }, t("private")));
  if (g.status === "abandoned") out.push(el("span", { class: "pill abandoned", title: t("nobody moved for too long: it cannot be finished") }, t("abandoned")));
  if (g.status === "stopped") out.push(el("span", { class: "pill abandoned", title: g.stop_reason || "" }, t("ended by a moderator")));
  return out.flatMap((pill) => [" ", pill]);
}

/** A game's description: its name and tags, rules, clock, seats and result, and when. */
function gameCell(g, when) {
  const result = g.totals
    ? ` — ${t("{totals}; won by {winners}", { totals: g.totals.join(" : "), winners: g.winners.map((w) => g.seats[w].name).join(" & ") })}`
    : "";
  const clock = clockText(g.clock);
  return el(
    "td",
    {},
    el("strong", { class: "game-name" }, g.name),
    tags(g),
    el("div", { class: "small muted" }, rulesText(g.rules_summary)),
    clock ? el("div", { class: "small clock-note" }, t("Clock: {clock}", { clock })) : null,
    el("div", { class: "small" }, seatsText(g), result),
    el("div", { class: "small muted when" }, when),
  );
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
        // each link says which game it is for, to someone who hears the links of the page in a list
        const about = (action) => ({ "aria-label": t("{action}: {game}", { action, game: g.name }) });
        let actions;
        if (kind === "open") actions = el("a", { class: "button", href: link, ...about(t("Join")) }, t("Join"));
        else if (kind === "playing") actions = el("a", { class: "button secondary", href: link, ...about(t("Watch")) }, t("Watch"));
        else if (g.status === "abandoned" || g.status === "stopped") actions = el("a", { class: "button secondary", href: link, ...about(t("View")) }, t("View"));
        else actions = el("span", { class: "actions-cell" }, el("a", { class: "button secondary", href: `${link}/replay`, ...about(t("Replay")) }, t("Replay")), " ",
          el("a", { href: `/api/games/${encodeURIComponent(g.id)}/record`, download: `coloretto-${g.id}.json`, ...about(t("record")) }, t("record")));
        const when = kind === "open" ? t("created {when}", { when: dateTime(g.created_at) }) : t("last move {when}", { when: dateTime(g.updated_at) });
        return el(
          "tr",
          { dataset: { game: g.id, status: g.status } },
          gameCell(g, when),
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

// ------------------------------------------------------------------ your games

/** Your seat at a game: the seat this browser holds the token of, else (logged in) your account's. */
function mySeat(g, saved) {
  if (saved) return saved.seat;
  const seat = g.seats.find((s) => s.account && s.name === user);
  return seat ? seat.seat : null;
}

async function cancelGame(g, saved, button) {
  button.disabled = true;
  try {
    await api(`/api/games/${encodeURIComponent(g.id)}/cancel`, { method: "POST", token: saved?.token });
    toast(t("{game} is cancelled.", { game: g.name }), "info");
    await refreshLists();
    focusHeading(document.getElementById("mine-panel").hidden ? "create-title" : "mine-title");
  } catch (err) {
    toast(err.message);
    button.disabled = false;
  }
}

function myGamesTable(mine) {
  return el(
    "table",
    { class: "list" },
    el(
      "tbody",
      {},
      mine.map(({ game: g, saved }) => {
        const link = `/games/${encodeURIComponent(g.id)}`;
        const seat = mySeat(g, saved);
        const waiting = g.status === "open";
        const reserved = seat === null && g.seats.some((s) => s.reserved);
        const label = reserved ? t("Take your seat") : t("Back to your seat");
        const actions = [el("a", { class: "button", href: link, "aria-label": t("{action}: {game}", { action: label, game: g.name }) }, label)];
        if (waiting && seat !== null && seat === g.creator_seat) {
          const button = el("button", { type: "button", class: "secondary cancel-game", "aria-label": t("Cancel the game {game}", { game: g.name }) }, t("Cancel"));
          button.addEventListener("click", () => cancelGame(g, saved, button));
          actions.push(" ", button);
        }
        const state = waiting
          ? tn("waiting for {n} more player", "waiting for {n} more players", g.seats.filter((s) => s.free).length)
          : t("in progress, last move {when}", { when: dateTime(g.updated_at) });
        return el("tr", { dataset: { game: g.id, status: g.status } }, gameCell(g, state), el("td", { class: "actions-cell" }, actions));
      }),
    ),
  );
}

/** The seats this browser keeps, looked up (the newest few, saved lately): a game listed nowhere
 * else (a private table) is yours too. A game found over is marked so, and not looked up again. */
async function savedGames(known) {
  const since = Date.now() - SAVED_SEAT_DAYS * 86400 * 1000;
  const recent = savedSeats().filter((s) => s.at >= since && !s.over).slice(0, SAVED_SEATS_LOOKED_UP);
  const found = await Promise.all(
    recent.map(async (saved) => {
      let game = known.get(saved.game);
      if (!game) {
        try {
          game = (await api(`/api/games/${encodeURIComponent(saved.game)}`, { token: saved.token })).game;
        } catch (err) {
          if (err.status === 404 || err.status === 403) markOver(saved);
          return null; // a passing error: looked up again next time
        }
      }
      if (game.status !== "open" && game.status !== "playing") {
        markOver(saved);
        return null;
      }
      return { game, saved };
    }),
  );
  return found.filter(Boolean);
}

function markOver(saved) {
  saveSeatRecord(saved.game, { seat: saved.seat, token: saved.token, at: saved.at, account: saved.account, over: true });
}

async function myGames(listedGames) {
  const mine = new Map();
  if (user) {
    for (const status of ["playing", "open"]) {
      for (const g of (await api(`/api/games?mine=true&status=${status}&limit=50`)).games) mine.set(g.id, { game: g, saved: null });
    }
  }
  const known = new Map(listedGames.map((g) => [g.id, g]));
  for (const { game } of mine.values()) known.set(game.id, game);
  for (const found of await savedGames(known)) mine.set(found.game.id, found);
  // in progress first (your turn may be waiting), then those waiting for players; the latest first
  const order = (m) => [m.game.status === "playing" ? 0 : 1, m.game.updated_at];
  return [...mine.values()].sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return x[0] - y[0] || (x[1] < y[1] ? 1 : x[1] > y[1] ? -1 : 0);
  });
}

// ------------------------------------------------------------------ refreshing the lists

/** The games of one list; abandoned games and those a moderator ended go with the finished ones
 * (they can be looked at, not replayed). */
async function listed(kind) {
  const { games } = await api(`/api/games?status=${kind}&limit=20`);
  if (kind !== "finished") return games;
  const [abandoned, stopped] = await Promise.all(["abandoned", "stopped"].map((status) => api(`/api/games?status=${status}&limit=20`)));
  const finished = [...games, ...abandoned.games, ...stopped.games];
  finished.sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0));
  return finished.slice(0, 20);
}

/** Move the keyboard's focus to a section's heading (its control went away). */
function focusHeading(id) {
  const heading = document.getElementById(id);
  if (!heading || heading.closest("[hidden]")) return;
  heading.tabIndex = -1;
  heading.focus({ preventScroll: true });
}

const drawn = new Map(); // what each list shows now: a list is drawn again only when it changes

/** Put a list in its box when it changed, keeping the keyboard's focus on the same control of the
 * same game (or, when that game left the list, on the list's heading). */
function show(boxId, key, make) {
  if (drawn.get(boxId) === key) return;
  drawn.set(boxId, key);
  const box = document.getElementById(boxId);
  const focused = box.contains(document.activeElement) ? document.activeElement : null;
  const same = focused
    ? { game: focused.closest("[data-game]")?.dataset.game, tag: focused.tagName, label: focused.getAttribute("aria-label") }
    : null;
  box.replaceChildren(make());
  box.className = "";
  if (same) {
    const row = [...box.querySelectorAll("[data-game]")].find((node) => node.dataset.game === same.game);
    const again = row && [...row.querySelectorAll(same.tag)].find((node) => node.getAttribute("aria-label") === same.label);
    if (again) again.focus({ preventScroll: true });
    else focusHeading(box.closest("section").querySelector("h2").id);
  }
}

/** What makes a list look different: the fields it shows, and the language's way of writing them. */
function listKey(games) {
  return JSON.stringify(games.map((g) => [g.id, g.status, g.moves, g.updated_at, g.seats.map((s) => [s.name, s.free, s.reserved])]));
}

async function refreshLists() {
  const lists = {};
  for (const kind of ["open", "playing", "finished"]) {
    try {
      lists[kind] = await listed(kind);
    } catch (err) {
      document.getElementById(`${kind}-games`).textContent = err.message;
      drawn.delete(`${kind}-games`);
    }
  }
  let mine = [];
  try {
    mine = await myGames([...(lists.open ?? []), ...(lists.playing ?? [])]);
  } catch (err) {
    toast(err.message);
  }
  const panel = document.getElementById("mine-panel");
  panel.hidden = mine.length === 0;
  show("my-games", listKey(mine.map((m) => m.game)), () => myGamesTable(mine));
  const yours = new Set(mine.map((m) => m.game.id));
  for (const [kind, games] of Object.entries(lists)) {
    const others = kind === "finished" ? games : games.filter((g) => !yours.has(g.id)); // yours are listed above
    show(`${kind}-games`, listKey(others), () => gameTable(others, kind));
  }
  document.body.dataset.lobby = "ready";
}

async function main() {
  try {
    options = await api("/api/options");
  } catch (err) {
    toast(err.message);
    return;
  }
  // the name field is on the page before the options arrive: a name typed meanwhile is kept
  const nameInput = document.getElementById("creator-name");
  if (!user && !nameInput.value.trim()) nameInput.value = myName();
  renderSeatCount();
  renderSeatSpecs();
  renderRuleOptions();
  document.getElementById("seat-count").addEventListener("change", renderSeatSpecs);
  document.getElementById("clock-kind").addEventListener("change", showClockFields);
  showClockFields();
  document.getElementById("rated")?.addEventListener("change", renderSeatSpecs);
  document.getElementById("create-form").addEventListener("submit", createGame);
  await refreshLists();
  setInterval(refreshLists, REFRESH_MS);
}

main();
