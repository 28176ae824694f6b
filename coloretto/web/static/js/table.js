// The table: live over a WebSocket; a seat (with its token) or a spectator.
import { api, clockText, el, forgetSeat, gameIdFromPath, loadSeat, myName, rememberName, rulesText, saveSeat, timeLeft, toast } from "./common.js";
import { num, pct, t, tn, translatedLegend } from "./i18n.js";
import { card, entryText, players, rows, scoring, seatNames, winnersText } from "./render.js";
import { describeAction, reviewWidget, summaryTable } from "./review.js";

const gameId = gameIdFromPath();
let seat = loadSeat(gameId); // {seat, token} or null
let state = null;
let socket = null;
let retry = 0;
let waiting = false; // an action was sent and its answer has not come yet
let hint = null; // {move, action}
let hintsAvailable = false;
let thinking = null; // the seat whose bot is thinking: the state's, then "thinking" messages until the next state
let stateArrived = 0; // performance.now() when the state came: its clock's seconds_left count from then
let reclaiming = false; // "reclaim" was sent and the state that answers it has not come yet
// the end screen's review of each game of the match: {widget, summary} by deal, kept across renders
const reviews = new Map();

const $ = (id) => document.getElementById(id);

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/api/games/${encodeURIComponent(gameId)}/ws`);
  socket.addEventListener("open", () => {
    retry = 0;
    $("connection").textContent = t("connected");
    socket.send(JSON.stringify({ type: "hello", token: seat?.token ?? null }));
  });
  socket.addEventListener("message", (event) => onMessage(JSON.parse(event.data)));
  socket.addEventListener("close", (event) => {
    waiting = false;
    if (event.code === 4404) {
      $("connection").textContent = t("there is no such game");
      return;
    }
    const delay = Math.min(10000, 500 * 2 ** retry++);
    $("connection").textContent = t("disconnected; reconnecting in {seconds} s…", { seconds: Math.round(delay / 1000) });
    setTimeout(connect, delay);
  });
}

function onMessage(msg) {
  if (msg.type === "state") {
    state = msg.state;
    state.cards = translatedLegend(state.cards);
    stateArrived = performance.now();
    thinking = state.thinking ?? null;
    waiting = false;
    reclaiming = false;
    render();
  } else if (msg.type === "thinking") {
    // a message about a move this page has already seen past is stale (it crossed a newer state)
    if (!state || msg.move < state.move_number) return;
    thinking = msg.seat;
    showThinking();
  } else if (msg.type === "welcome") {
    $("connection").textContent = msg.seat === null ? t("watching") : t("connected · seat {seat}", { seat: msg.seat + 1 });
  } else if (msg.type === "error") {
    waiting = false;
    reclaiming = false;
    if (msg.error === "bad_token") {
      forgetSeat(gameId);
      seat = null;
    }
    toast(msg.message);
    if (state) render();
  } else if (msg.type === "hint") {
    showHint(msg);
  } else if (msg.type === "review") {
    // a review of this game ended (started here or by anyone else): its widget reads it
    reviews.get(msg.game)?.widget.refresh();
  }
}

function act(action) {
  if (!state || waiting || !state.legal.includes(action)) return;
  if (!socket || socket.readyState !== WebSocket.OPEN) {
    toast(t("not connected: reconnecting…"));
    return;
  }
  waiting = true;
  socket.send(JSON.stringify({ type: "act", action, move: state.move_number }));
}

function names() {
  return seatNames(state.game);
}

function turnText() {
  const g = state.game;
  if (g.status === "open") {
    const free = g.seats.filter((s) => s.free).length;
    return tn("Waiting for {n} more player", "Waiting for {n} more players", free);
  }
  if (g.status === "finished") return t("Game over");
  if (g.status === "expired") return t("This game expired: nobody came to take its free seats in time");
  if (g.status === "abandoned") return t("This game was abandoned: nobody moved for too long");
  const who = names()[state.to_move];
  const seatInfo = g.seats[state.to_move];
  if (seatInfo.away) return state.to_move === state.you ? t("A bot is playing your turn") : t("A bot plays for {name}…", { name: who });
  if (state.start_picks_left > 0) {
    if (state.to_move === state.you) return t("Your turn: choose a starting colour");
    return seatInfo.kind === "bot" ? t("{name} is choosing a starting colour…", { name: who }) : t("Waiting for {name} to choose a starting colour", { name: who });
  }
  if (state.to_move === state.you) {
    if (state.pending_card !== null) return t("Your turn: place the card in a row");
    if (state.jokers_to_name.length) return t("Your turn: name your joker's colour");
    if (state.legal.includes("x")) return t("Your turn: nothing to draw or take, pass");
    return state.legal.includes("d") ? t("Your turn: draw a card or take a row") : t("Your turn: take a row");
  }
  return seatInfo.kind === "bot" ? t("{name} is thinking…", { name: who }) : t("Waiting for {name}", { name: who });
}

function render() {
  const g = state.game;
  document.title = t("Coloretto — {name}", { name: g.name });
  $("game-title").textContent = g.name;
  $("rules-text").textContent = rulesText(g.rules_summary);
  $("invite-link").value = `${location.origin}/games/${gameId}`;
  const mine = state.to_move !== null && state.to_move === state.you;
  Object.assign(document.body.dataset, { move: state.move_number, status: g.status, turn: mine ? "mine" : "other" });
  $("turn").textContent = turnText();
  $("turn").className = `turn ${mine ? "mine" : ""}`;
  const matchText = state.match.games > 1 ? ` · ${t("game {game} of {games}", { game: state.deal, games: state.match.games })}` : "";
  $("round").textContent = `${state.start_picks_left > 0 ? t("Before round 1") : t("Round {round}", { round: state.round })}${matchText}`;
  const before = state.cards_before_last_round;
  $("deck-info").textContent = state.last_round
    ? t("Last round! {left}", { left: tn("{n} card left", "{n} cards left", Math.max(0, state.cards_in_deck)) })
    : `${tn("{n} card left", "{n} cards left", state.cards_in_deck)} · ${t("{n} before the last-round card", { n: before })}`;
  $("deck-info").className = `pill ${state.last_round ? "warn" : ""}`;
  $("deck-count").textContent = state.cards_in_deck;
  const canDraw = state.legal.includes("d");
  $("deck").disabled = !canDraw || waiting;
  $("deck").classList.toggle("hinted", !!hint && hint.move === state.move_number && hint.action === "d");
  $("pending").replaceChildren(
    state.pending_card !== null ? el("span", {}, el("span", { class: "small muted" }, `${t("drawn:")} `), card(state.pending_card, state.cards)) : "",
  );
  $("pass").hidden = !state.legal.includes("x");
  renderJokerChoice();
  renderStartChoice();
  $("hint").hidden = !(hintsAvailable && mine);
  if (!hint || hint.move !== state.move_number) $("hint-text").textContent = "";

  const hintAction = hint && hint.move === state.move_number ? hint.action : null;
  const actionFor = (i) => {
    if (!mine || waiting) return null;
    const place = `p${i + 1}`;
    const take = `t${i + 1}`;
    if (state.legal.includes(place)) return place;
    if (state.legal.includes(take)) return take;
    return null;
  };
  $("rows").replaceChildren(rows(state, state.cards, actionFor, act, hintAction));
  const online = g.seats.filter((s) => s.online).map((s) => s.seat);
  const away = g.status === "playing" ? g.seats.filter((s) => s.away).map((s) => s.seat) : [];
  $("players").replaceChildren(
    players(state, state.cards, names(), { you: state.you, toMove: state.to_move, online, away, clock: clockTimers(), thinkingSlots: true }),
  );
  showThinking();
  const edition = g.rules.edition;
  $("log").replaceChildren(...state.log.map((e) => el("li", { value: e.number, dataset: { move: e.move, seat: e.seat } }, entryText(e, names(), state.cards, edition))));
  $("log").scrollTop = $("log").scrollHeight;
  renderClockInfo();
  renderAway();
  renderJoin();
  renderFinal();
}

/** The running clocks of the state as render.js draws them: the turn of the seat to move, and each
 * person's bank (the bank of the seat to move runs too; a bot's seat never runs a clock). They count
 * from when the state arrived, on this page's own clock: the server's seconds_left, not its deadline,
 * so a skewed clock does not matter. */
function clockTimers() {
  const clock = state.clock;
  if (!clock || state.game.status !== "playing") return null;
  const endsAt = (seconds) => stateArrived + seconds * 1000;
  const running = clock.seconds_left !== null && state.to_move !== null;
  return {
    toMove: state.to_move,
    turn: running ? { seconds: clock.seconds_left, endsAt: endsAt(clock.seconds_left) } : null,
    banks: clock.banks
      ? clock.banks.map((seconds, i) =>
          state.game.seats[i].kind === "bot" ? null : { seconds, endsAt: running && i === state.to_move ? endsAt(seconds) : null },
        )
      : null,
  };
}

/** Every running clock pill on the page, brought to now: never below 0, red under 10 s. */
function tick() {
  const now = performance.now();
  for (const pill of document.querySelectorAll("[data-ends-at]")) {
    const left = Math.max(0, (Number(pill.dataset.endsAt) - now) / 1000);
    const text = timeLeft(left);
    const time = pill.querySelector(".time");
    if (time.textContent !== text) time.textContent = text;
    pill.classList.toggle("low", left < 10);
  }
}

/** The "thinking…" of the seat whose bot thinks, in place: its panel's live region is only filled in. */
function showThinking() {
  const playing = state && state.game.status === "playing";
  for (const slot of document.querySelectorAll("#players .thinking")) {
    const on = playing && Number(slot.dataset.seat) === thinking;
    slot.classList.toggle("on", on);
    const text = on ? t("thinking…") : "";
    if (slot.textContent !== text) slot.textContent = text;
  }
}

function renderClockInfo() {
  const text = clockText(state.game.clock);
  $("clock-info").hidden = !text;
  $("clock-info").textContent = text ? t("Clock: {clock}", { clock: text }) : "";
}

/** Your seat taken over by a bot: say so, and offer it back. */
function renderAway() {
  const g = state.game;
  const mine = state.you !== null && g.status === "playing" && g.seats[state.you]?.away;
  $("away-banner").hidden = !mine;
  $("reclaim").disabled = reclaiming;
}

function reclaim() {
  if (!socket || socket.readyState !== WebSocket.OPEN) {
    toast(t("not connected: reconnecting…"));
    return;
  }
  reclaiming = true;
  $("reclaim").disabled = true;
  socket.send(JSON.stringify({ type: "reclaim" }));
}

function renderJokerChoice() {
  const box = $("joker-choice");
  const choices = state.legal.filter((a) => a.startsWith("j:"));
  box.hidden = !choices.length;
  if (!choices.length) return box.replaceChildren();
  box.replaceChildren(
    el("span", {}, t("Your {joker} counts as:", { joker: state.cards[state.jokers_to_name[0]]?.name ?? t("joker") }), " "),
    ...choices.map((a) => {
      const token = a.slice(2);
      const info = state.cards.find((c) => c.token === token);
      return el("button", { type: "button", title: info.name, onclick: () => act(a), dataset: { action: a } }, card(info.id, state.cards, { mini: true }));
    }),
  );
}

/** While starting colours are chosen (variant): who chooses, and for the chooser a button per free colour. */
function renderStartChoice() {
  const box = $("start-choice");
  const left = state.start_picks_left;
  box.hidden = !(left > 0 && state.game.status === "playing");
  if (box.hidden) return box.replaceChildren();
  const n = names();
  const parts = [
    el("h3", {}, t("Starting colours are being chosen")),
    el(
      "p",
      { class: "small muted" },
      tn(
        "{n} still to choose, in seat order from {name}. Each colour goes to one player only; then round 1 begins.",
        "{n} still to choose, in seat order from {name}. Each colour goes to one player only; then round 1 begins.",
        left,
        { name: n[state.first_player] },
      ),
    ),
  ];
  const choices = state.legal.filter((a) => a.startsWith("s:"));
  if (choices.length) {
    parts.push(
      el("p", {}, el("strong", {}, t("Choose your starting colour")), " ", el("span", { class: "small muted" }, t("(click it or press its letter)"))),
      el(
        "div",
        { class: "start-buttons" },
        choices.map((a) => {
          const info = state.cards.find((c) => c.token === a.slice(2));
          return el(
            "button",
            { type: "button", title: `${info.name} (${info.token})`, "aria-label": t("choose {colour}", { colour: info.name }), onclick: () => act(a), dataset: { action: a }, disabled: waiting },
            card(info.id, state.cards),
            el("span", { class: "start-name" }, info.name),
          );
        }),
      ),
    );
  }
  box.replaceChildren(...parts);
}

function renderJoin() {
  const box = $("join");
  const g = state.game;
  if (g.status !== "open") {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const free = g.seats.filter((s) => s.free);
  if (state.you !== null) {
    box.replaceChildren(
      el("h2", {}, t("Waiting for players")),
      el(
        "p",
        {},
        tn(
          "You have seat {seat}. Send the invite link to {n} more player; the game starts when every seat is taken.",
          "You have seat {seat}. Send the invite link to {n} more players; the game starts when every seat is taken.",
          free.length,
          { seat: state.you + 1 },
        ),
      ),
    );
    return;
  }
  // every state redraws the box: what was typed (and the focus) must survive it, or a state that
  // comes in between typing and clicking "Sit here" sends an empty name
  const typed = $("join-name");
  const hadFocus = typed !== null && document.activeElement === typed;
  const nameInput = el("input", { id: "join-name", maxlength: 40, placeholder: t("your name"), value: typed ? typed.value : myName(), "aria-label": t("your name") });
  box.replaceChildren(
    el("h2", {}, t("Take a seat")),
    el("label", {}, t("Your name"), " ", nameInput),
    el(
      "div",
      { class: "seats-join" },
      g.seats.map((s) =>
        el(
          "div",
          {},
          t("Seat {seat}:", { seat: s.seat + 1 }),
          " ",
          s.free ? el("button", { type: "button", dataset: { seat: s.seat }, onclick: () => join(s.seat, nameInput.value) }, t("Sit here")) : el("strong", {}, s.name),
        ),
      ),
    ),
  );
  if (hadFocus) nameInput.focus();
}

async function join(seatIndex, name) {
  name = name.trim();
  if (!name) {
    toast(t("Type your name first."));
    return;
  }
  try {
    const grant = await api(`/api/games/${encodeURIComponent(gameId)}/join`, { method: "POST", body: { name, seat: seatIndex } });
    rememberName(name);
    saveSeat(gameId, grant.seat, grant.token);
    seat = { seat: grant.seat, token: grant.token };
    socket.send(JSON.stringify({ type: "hello", token: grant.token }));
  } catch (err) {
    toast(err.message);
  }
}

function renderFinal() {
  const box = $("final");
  const deals = state.match.deals;
  const finished = state.game.status === "finished";
  if (!deals.length) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const last = deals[deals.length - 1];
  const n = names();
  const parts = [];
  if (finished) {
    const winners = winnersText(state.match.winners, n);
    parts.push(el("h2", {}, state.match.winners.length > 1 ? t("Shared win: {names}", { names: winners }) : t("{name} wins!", { name: winners })));
  } else {
    parts.push(el("h2", {}, t("Game {game} of {games} is over", { game: last.deal, games: state.match.games })));
  }
  parts.push(el("h3", {}, state.match.games > 1 ? t("Scoring of game {game}", { game: last.deal }) : t("Scoring")), scoring(last, state.cards, n));
  if (state.match.games > 1) {
    parts.push(el("p", {}, t("Match totals:"), " ", state.match.totals.map((total, i) => `${n[i]} ${total}`).join(" · ")));
  }
  if (finished) {
    const links = [];
    for (const d of deals) {
      const several = deals.length > 1;
      links.push(
        el("a", { class: "button secondary", href: `/games/${encodeURIComponent(gameId)}/replay?game=${d.deal}` }, several ? t("Replay (game {game})", { game: d.deal }) : t("Replay")), " ",
        el("a", { class: "button secondary", href: `/api/games/${encodeURIComponent(gameId)}/record?game=${d.deal}`, download: `coloretto-${gameId}-${d.deal}.json` }, several ? t("Download record (game {game})", { game: d.deal }) : t("Download record")), " ",
      );
    }
    parts.push(el("p", { class: "actions" }, links, el("a", { class: "button", href: "/" }, t("Back to the lobby"))));
    parts.push(reviewSection(deals));
  }
  box.replaceChildren(...parts);
}

/** The review of each game of a finished match: offered, its progress, then a link to the replay with
 * it and each player's summary beside the scoring. The widgets read the status when they are made, so
 * that every seat and spectator sees a review someone started. */
function reviewSection(deals) {
  const n = names();
  const section = el("section", { class: "review-end", "aria-label": t("game review") }, el("h3", {}, t("Review")));
  for (const d of deals) {
    let entry = reviews.get(d.deal);
    if (!entry) {
      const summary = el("div", { class: "review-end-summary" });
      const label = deals.length > 1 ? t("Review game {game}", { game: d.deal }) : t("Review this game");
      const widget = reviewWidget(gameId, d.deal, {
        label,
        onDone: (review) => summary.replaceChildren(summaryTable(review, n)),
      });
      entry = { widget, summary };
      reviews.set(d.deal, entry);
    }
    section.append(deals.length > 1 ? el("h4", {}, t("Game {game}", { game: d.deal })) : "", entry.widget.node, entry.summary);
  }
  section.append(el("p", { class: "small muted" }, t("The review plays every position again with the search: each player's win chance over the game, the marked moves (?! ? ??), the luck of the cards drawn.")));
  return section;
}

async function askHint() {
  if (!state || state.to_move !== state.you || !hintsAvailable) return;
  $("hint-text").textContent = t("thinking…");
  hint = null;
  socket.send(JSON.stringify({ type: "hint" }));
}

function showHint(msg) {
  hint = { move: msg.move, action: msg.best };
  if (!msg.best) {
    $("hint-text").textContent = t("No hint: nothing to choose.");
  } else {
    const lines = msg.actions.slice(0, 3).map((a) =>
      t("{action}: {chance} to win, {points} points", {
        action: describeAction(a.action, state.cards),
        chance: pct(a.win_probability),
        points: num(a.expected_score, 1),
      }),
    );
    $("hint-text").replaceChildren(el("strong", {}, t("Hint: {action}", { action: describeAction(msg.best, state.cards) })), el("br"), el("span", { class: "muted" }, lines.join(" · ")));
  }
  if (state) render();
}

function onKey(event) {
  if (!state || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
  const key = event.key.toLowerCase();
  if (key === "d") act("d");
  else if (key === "x") act("x");
  else if (key === "h") askHint();
  else if (/^[1-5]$/.test(key)) {
    const place = `p${key}`;
    act(state.legal.includes(place) ? place : `t${key}`);
  } else {
    // a colour's letter names a joker or chooses a starting colour, whichever is to be done
    const byColour = state.legal.filter((a) => a.startsWith("j:") || a.startsWith("s:"));
    const match = byColour.find((a) => a.slice(2).toLowerCase() === key);
    if (match) act(match);
  }
}

async function main() {
  $("deck").addEventListener("click", () => act("d"));
  $("pass").addEventListener("click", () => act("x"));
  $("hint").addEventListener("click", askHint);
  $("reclaim").addEventListener("click", reclaim);
  // a quarter of a second, so that each whole second shows on time; the text changes once a second
  setInterval(tick, 250);
  $("copy-link").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("invite-link").value);
      toast(t("Invite link copied"), "info");
    } catch {
      $("invite-link").select();
    }
  });
  document.addEventListener("keydown", onKey);
  try {
    hintsAvailable = (await api("/api/options")).hints;
  } catch { /* hints stay off */ }
  connect();
}

main();
