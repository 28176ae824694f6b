// The lobby: create a game, join an open one, watch or replay the others.
import { api, el, myName, rememberName, saveSeat, toast } from "./common.js";

let options = null;

const LABELS = {
  edition: "Edition", table: "Scoring table", joker_timing: "Jokers", round_starter: "Next round starts",
  plus_colours: "Plus colours", tie_break: "Ties", cards_under_last_round: "Cards under the last-round card",
  match_games: "Games in the match",
};

function botLabel(bot) {
  return bot.difficulty ? `bot: ${bot.name}` : `bot: ${bot.name} (${bot.description})`;
}

function renderSeatSpecs() {
  const box = document.getElementById("seat-specs");
  const count = Number(document.getElementById("seat-count").value);
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  for (let i = 0; i < count; i++) {
    const select = el(
      "select",
      { name: `seat-${i}`, id: `seat-${i}`, "aria-label": `seat ${i + 1}` },
      el("option", { value: "human" }, i === 0 ? "you" : "a person (invite by link)"),
      options.bots.map((b) => el("option", { value: `bot:${b.name}` }, botLabel(b))),
    );
    select.value = previous[i] ?? (i === 0 ? "human" : `bot:${options.default_bot}`);
    box.append(el("div", { class: "seat-spec" }, el("label", { for: `seat-${i}` }, `Seat ${i + 1}`), select));
  }
}

function renderRuleOptions() {
  const box = document.getElementById("rule-options");
  for (const opt of options.rules) {
    if (opt.name === "players") continue;
    let input;
    if (opt.name === "cards_under_last_round") {
      input = el("input", { type: "number", min: 0, max: 60, id: `rule-${opt.name}`, placeholder: "edition's number" });
    } else {
      input = el("select", { id: `rule-${opt.name}` }, opt.values.map((v) => el("option", { value: v }, v)));
      input.value = String(opt.default);
    }
    box.append(el("label", { title: opt.help }, el("span", {}, LABELS[opt.name] || opt.name), input, el("span", { class: "small muted" }, opt.help)));
  }
}

function readRules() {
  const rules = {};
  for (const opt of options.rules) {
    if (opt.name === "players") continue;
    const input = document.getElementById(`rule-${opt.name}`);
    if (opt.name === "cards_under_last_round") {
      if (input.value !== "") rules[opt.name] = Number(input.value);
    } else if (opt.name === "match_games") {
      rules[opt.name] = Number(input.value);
    } else {
      rules[opt.name] = input.value;
    }
  }
  return rules;
}

async function createGame(event) {
  event.preventDefault();
  const name = document.getElementById("creator-name").value.trim();
  const seats = [...document.querySelectorAll("#seat-specs select")].map((s) =>
    s.value === "human" ? { kind: "human" } : { kind: "bot", bot: s.value.slice(4) },
  );
  const humans = seats.filter((s) => s.kind === "human").length;
  if (humans && !name) {
    toast("Type your name first: you take the first person's seat.");
    document.getElementById("creator-name").focus();
    return;
  }
  const body = { name: document.getElementById("game-name").value.trim(), rules: readRules(), seats };
  if (humans) body.creator_name = name;
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
  return game.seats.map((s) => (s.free ? "(free)" : s.name)).join(", ");
}

function gameTable(games, kind) {
  if (!games.length) {
    const empty = { open: "No game is waiting for players. Create one!", playing: "Nobody is playing right now.", finished: "No finished game yet." }[kind];
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
        if (kind === "open") actions = el("a", { class: "button", href: link }, "Join");
        else if (kind === "playing") actions = el("a", { class: "button secondary", href: link }, "Watch");
        else actions = el("span", {}, el("a", { class: "button secondary", href: `${link}/replay` }, "Replay"), " ",
          el("a", { href: `/api/games/${encodeURIComponent(g.id)}/record`, download: `coloretto-${g.id}.json` }, "record"));
        const result = g.totals ? ` — ${g.totals.join(" : ")}; won by ${g.winners.map((w) => g.seats[w].name).join(" & ")}` : "";
        return el(
          "tr",
          { dataset: { game: g.id } },
          el("td", {}, el("strong", {}, g.name), el("div", { class: "small muted" }, g.rules_text), el("div", { class: "small" }, seatsText(g), result)),
          el("td", { class: "small muted" }, kind === "open" ? `${g.seats.filter((s) => s.free).length} free` : `${g.moves} moves`),
          el("td", {}, actions),
        );
      }),
    ),
  );
}

async function refreshLists() {
  for (const kind of ["open", "playing", "finished"]) {
    try {
      const { games } = await api(`/api/games?status=${kind}&limit=20`);
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
  renderSeatSpecs();
  renderRuleOptions();
  document.getElementById("seat-count").addEventListener("change", renderSeatSpecs);
  document.getElementById("create-form").addEventListener("submit", createGame);
  await refreshLists();
  setInterval(refreshLists, 5000);
}

main();
