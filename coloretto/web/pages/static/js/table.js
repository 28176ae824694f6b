// The table: live over a WebSocket; a seat (with its token, or the logged-in account's) or a spectator.
import { api, clockText, el, forgetSeat, gameIdFromPath, loadSeat, myName, rememberName, rulesText, saveSeat, timeLeft, toast } from "./common.js";
import { num, pct, t, tn, tnDecimal, translatedLegend } from "./i18n.js";
import { card, cardNames, collection, entryText, players, rows, scoring, seatName, seatNames, winnersText } from "./render.js";
import { describeAction, reviewWidget, summaryTable } from "./review.js";
import { createChat } from "./chat.js";
import { chatActions } from "./report.js";
import { animateMove, capture, motionAllowed } from "./animate.js";
import { applyChange } from "./changes.js";
import { setSoundWanted, soundWanted, turnNotifier, unlockAudio } from "./notify.js";

const gameId = gameIdFromPath();
let seat = loadSeat(gameId); // {seat, token} or null
let state = null;
// protocol 2: the view as the server sent it (changes apply to it; `state` is the page's copy) and
// its version; whether the whole view was asked for again (a change did not follow this version)
let view = null;
let viewVersion = null;
let syncAsked = false;
let socket = null;
let retry = 0; // reconnection attempts since the connection was last up
let reconnectTimer = null;
let reconnectAt = 0; // performance.now() of the next attempt
let lastHeard = 0; // performance.now() of the last message: a connection silent too long is dead
let everConnected = false;
let gone = false; // the server says there is no such game: nothing to reconnect to
// A server that restarts (a deploy: close 1012 "service restart", or 1001 "going away") asks its
// clients to reconnect: the page does so at once and quietly (the table stays as it is, nothing is
// said) for QUIET_MS; only a reconnection that takes longer is shown, as any lost connection.
const RESTART_CODES = new Set([1001, 1012]);
const QUIET_MS = 5000;
let quietUntil = 0; // performance.now() until which a lost connection is not shown
let quickTries = 0; // quiet reconnection attempts so far
let lastAct = null; // {action, move}: the last act sent, until a state answers it
let resend = null; // an act to say again once connected: its answer never came (a restart)
let live = false; // the table shown is the server's latest: false from a lost connection until a fresh state
let waiting = false; // an action was sent and its answer has not come yet
let hint = null; // {move, action}
let hintsAvailable = false;
let thinking = null; // the seat whose bot is thinking: the state's, then "thinking" messages until the next state
let stateArrived = 0; // performance.now() when the state came: its clock's seconds_left count from then
let reclaiming = false; // "reclaim" was sent and the state that answers it has not come yet
let user = null; // the logged-in account's name (the welcome's), or null for a guest
let rematchId = null; // the rematch of this game, once someone made it
let lastRemoved = null; // two players: {round, row, cards} of the row that left the game last, as seen here
let claimTried = false; // a kept rematch seat is claimed once a page
// the end screen's review of each game of the match: {widget, summary} by deal, kept across renders
const reviews = new Map();
const notifier = turnNotifier();

const $ = (id) => document.getElementById(id);

/** A message to the server, if the connection is up; false if it is not. */
function sendMessage(message) {
  if (!socket || socket.readyState !== WebSocket.OPEN) return false;
  socket.send(JSON.stringify(message));
  return true;
}

/** The errors that end the account's session on this page (a ban, a deletion, a log-out elsewhere). */
const ACCOUNT_ENDED = new Set(["session_ended", "banned", "account_deleted"]);

const chat = createChat({
  send: (text) => sendMessage({ type: "chat", text }),
  actions: chatActions({ game: gameId, user: () => user, seat: () => state?.you ?? null }),
});

// ---------------------------------------------------------------- the connection

function connect() {
  clearTimeout(reconnectTimer);
  reconnectTimer = null;
  if (socket && socket.readyState <= WebSocket.OPEN) return; // connecting or open already
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/api/games/${encodeURIComponent(gameId)}/ws?protocol=2`);
  socket = ws;
  ws.addEventListener("open", () => {
    if (socket !== ws) return;
    retry = 0;
    quickTries = 0;
    everConnected = true;
    lastHeard = performance.now();
    $("connection").textContent = t("connected");
    ws.send(JSON.stringify({ type: "hello", token: seat?.token ?? null }));
    showConnection();
  });
  ws.addEventListener("message", (event) => {
    if (socket !== ws) return;
    lastHeard = performance.now();
    onMessage(JSON.parse(event.data));
  });
  ws.addEventListener("close", (event) => {
    if (socket === ws) lost(event.code);
  });
  showConnection();
}

/** The connection is gone: the table is stale until a new one brings a fresh state; try again
 * after a wait that doubles with each attempt (0.5 s to 15 s, a little random so that the pages of
 * a restarted server do not all come back at once). */
function lost(code) {
  socket = null;
  view = null; // the next connection sends the whole view first
  if (RESTART_CODES.has(code)) {
    quietUntil = performance.now() + QUIET_MS;
    quickTries = 0;
    setTimeout(showIfStillLost, QUIET_MS + 50);
  }
  if (performance.now() < quietUntil) {
    // reconnect at once, then every quarter to full second; the act whose answer did not come
    // before the close is said again if the table has not moved meanwhile
    if (waiting && lastAct) resend = lastAct;
    const delay = quickTries === 0 ? 0 : Math.min(1000, 125 * 2 ** quickTries);
    quickTries += 1;
    reconnectAt = performance.now() + delay;
    reconnectTimer = setTimeout(connect, delay);
    return;
  }
  waiting = false;
  resend = null;
  setLive(false);
  if (code === 4404) {
    gone = true;
    $("connection").textContent = t("there is no such game");
    showConnection();
    return;
  }
  const delay = Math.min(15000, 500 * 2 ** retry) * (0.8 + Math.random() * 0.4);
  retry += 1;
  reconnectAt = performance.now() + delay;
  reconnectTimer = setTimeout(connect, delay);
  $("connection").textContent = t("disconnected; reconnecting in {seconds} s…", { seconds: Math.max(1, Math.round(delay / 1000)) });
  showConnection();
}

/** The quiet time after a restart is over: a page still not connected says so, as for any
 * lost connection. */
function showIfStillLost() {
  if (performance.now() < quietUntil || (socket && socket.readyState === WebSocket.OPEN)) return;
  waiting = false;
  resend = null;
  $("connection").textContent = t("disconnected; reconnecting in {seconds} s…", { seconds: Math.max(1, Math.round((reconnectAt - performance.now()) / 1000)) });
  setLive(false);
}

/** A connection that has said nothing for 45 s is dead though its socket does not know it yet (a
 * laptop that slept, a network that changed): a ping every 20 s keeps a live one talking. */
function heartbeat() {
  if (!socket || socket.readyState !== WebSocket.OPEN) return;
  const silent = performance.now() - lastHeard;
  if (silent > 45000) {
    const dead = socket;
    lost(4000);
    dead.close();
  } else if (silent > 20000) {
    sendMessage({ type: "ping" });
  }
}

/** The banner while the table is not live: lost, the next attempt and its number, or catching up. */
function showConnection() {
  const banner = $("connection-banner");
  banner.hidden = live || gone || !(everConnected || retry > 0);
  if (banner.hidden) return;
  const open = socket && socket.readyState === WebSocket.OPEN;
  let text;
  if (open) text = t("Connected again: bringing the table up to date…");
  else if (reconnectTimer !== null) {
    const seconds = Math.max(0, Math.ceil((reconnectAt - performance.now()) / 1000));
    text = t("Reconnecting in {seconds} s (attempt {attempt})… The table shows the last position received, not live.", { seconds, attempt: retry });
  } else text = t("Reconnecting now (attempt {attempt})…", { attempt: Math.max(1, retry) });
  if ($("connection-banner-text").textContent !== text) $("connection-banner-text").textContent = text;
  $("connection-banner-title").textContent = open ? t("Reconnected") : t("Connection lost");
  $("reconnect-now").hidden = open || reconnectTimer === null;
}

/** Live (the server's latest state) or stale: a stale table is dimmed, marked "not live", and offers
 * no action until the fresh state comes. */
function setLive(on) {
  live = on;
  document.body.dataset.live = on ? "yes" : "no";
  $("table-area").classList.toggle("stale", !on && state !== null);
  $("stale-pill").hidden = on || state === null;
  showConnection();
  if (state) render();
}

// ---------------------------------------------------------------- messages

function onMessage(msg) {
  if (msg.type === "state") {
    view = msg.state;
    viewVersion = msg.v ?? null;
    syncAsked = false;
    onState(structuredClone(view));
  } else if (msg.type === "change") {
    if (view === null || msg.from !== viewVersion) {
      // a change missed (or crossed by a newer whole view): ask for the whole view once
      if (!syncAsked) syncAsked = sendMessage({ type: "sync" });
      return;
    }
    view = applyChange(view, msg);
    viewVersion = msg.v;
    onState(structuredClone(view));
  } else if (msg.type === "thinking") {
    // a message about a move this page has already seen past is stale (it crossed a newer state)
    if (!state || msg.move < state.move_number) return;
    thinking = msg.seat;
    showThinking();
  } else if (msg.type === "welcome") {
    user = msg.user ?? null;
    $("connection").textContent = msg.seat === null ? t("watching") : t("connected · seat {seat}", { seat: msg.seat + 1 });
    if (state) render();
  } else if (msg.type === "error") {
    waiting = false;
    reclaiming = false;
    if (msg.error === "bad_token") {
      forgetSeat(gameId);
      seat = null;
    }
    if (ACCOUNT_ENDED.has(msg.error)) {
      // the account was logged out, banned or deleted: the page comes back as a guest's
      toast(msg.message);
      setTimeout(() => location.reload(), 2000);
      return;
    }
    if (!chat.error(msg.error, msg.message)) toast(msg.message);
    if (state) render();
  } else if (msg.type === "hint") {
    showHint(msg);
  } else if (msg.type === "review") {
    // a review of this game ended (started here or by anyone else): its widget reads it
    reviews.get(msg.game)?.widget.refresh();
  } else if (msg.type === "chat") {
    chat.receive(msg);
  } else if (msg.type === "chat_removed") {
    chat.remove(msg.numbers);
  } else if (msg.type === "rematch") {
    rematchId = msg.game;
    announce(t("A rematch is ready: the same seats, a new deal."));
    if (state) render();
  }
}

/** A state: drawn at once; the move that led to it animated when it is the very next move of the
 * one shown (not a state sent again, not a jump after a reconnection), and told to screen readers. */
function onState(next) {
  next.cards = translatedLegend(next.cards);
  const prev = state;
  const entry = next.log.length ? next.log[next.log.length - 1] : null;
  const step = prev && live && next.deal === prev.deal && next.move_number === prev.move_number + 1 && entry && entry.number === next.move_number
    ? entry
    : null;
  const removed = step ? removedRow(prev, next, step) : null;
  const before = step && motionAllowed() ? capture() : null;
  if (removed !== null) lastRemoved = { round: prev.round, row: removed + 1, cards: prev.rows[removed].cards };
  if (prev && next.deal !== prev.deal) lastRemoved = null;
  state = next;
  stateArrived = performance.now();
  thinking = state.thinking ?? null;
  waiting = false;
  reclaiming = false;
  lastAct = null;
  if (state.game.rematch) rematchId = state.game.rematch;
  setLive(true); // draws the table
  notifier.update(isMyTurn(), state.game.name);
  if (before) animateMove(step, before, removed);
  if (prev) tellNews(prev, next);
  claimKeptSeat();
  sayAgain(next);
}

/** After a quiet reconnection: the act sent as the server restarted (or clicked meanwhile) is sent
 * again once this seat's own view shows the table where it was; a table that moved on drops it. */
function sayAgain(next) {
  if (resend === null || next.you === null || next.you === undefined) return;
  const again = resend;
  resend = null;
  if (next.move_number === again.move && next.legal.includes(again.action)) act(again.action);
}

/** Two players: the row nobody took, which left the game as ``entry`` (a take) ended the round; or
 * null. The state counts the cards out of the game; the page sees which row they were. */
function removedRow(prev, next, entry) {
  if (prev.rows.length !== 3 || prev.game.rules.players !== 2) return null;
  const action = entry.move.split(" ")[0];
  if (!/^t\d+$/.test(action)) return null;
  const out = (s) => (s.removed_cards ?? []).reduce((a, b) => a + b, 0);
  if (out(next) <= out(prev)) return null;
  const taken = Number(action.slice(1)) - 1;
  const left = prev.rows.findIndex((row, i) => !row.taken && i !== taken);
  return left >= 0 ? left : null;
}

/** Screen readers hear each new move, whose turn it is when it becomes theirs, and the end. */
function tellNews(prev, next) {
  const names = seatNames(next.game);
  const said = next.log
    .filter((e) => next.deal !== prev.deal || e.number > prev.move_number)
    .slice(-3)
    .map((e) => entryText(e, names, next.cards, next.game.rules.edition));
  const mine = (s) => s.to_move !== null && s.to_move === s.you && s.game.status === "playing";
  if (mine(next) && !mine(prev)) said.push(turnText());
  if (next.game.status === "finished" && prev.game.status !== "finished") said.push(resultText());
  if (said.length) announce(said.join(" "));
}

function announce(text) {
  const box = $("announcer");
  // the same words twice are still news: the region is emptied first so that it changes
  box.textContent = "";
  setTimeout(() => { box.textContent = text; }, 50);
}

function act(action) {
  if (!state || waiting || !state.legal.includes(action)) return;
  const move = { action, move: state.move_number };
  if (live && !sendMessage({ type: "act", ...move }) && performance.now() < quietUntil) {
    resend = move; // reconnecting quietly after a restart: said once connected again
  } else if (!live || socket === null || socket.readyState !== WebSocket.OPEN) {
    toast(t("not connected: reconnecting…"));
    return;
  } else {
    lastAct = move;
  }
  waiting = true;
  render();
}

// ---------------------------------------------------------------- drawing the table

function names() {
  return seatNames(state.game);
}

function isMyTurn() {
  return state.to_move !== null && state.to_move === state.you && state.game.status === "playing";
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
  if (g.status === "cancelled") return t("This game was cancelled by its creator");
  if (g.status === "stopped") return t("A moderator ended this game: {reason}", { reason: g.stop_reason || "—" });
  const who = names()[state.to_move];
  const seatInfo = g.seats[state.to_move];
  if (seatInfo.resigned) return state.to_move === state.you ? t("A bot is finishing your game") : t("A bot finishes for {name}…", { name: who });
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

/** Who won, as the end's banner says it. */
function resultText() {
  const winners = state.match.winners ?? [];
  if (!winners.length) return t("Game over");
  const text = winnersText(winners, names());
  return winners.length > 1 ? t("Shared win: {names}", { names: text }) : t("{name} wins!", { name: text });
}

/** Where the focus was in the table before it is drawn again, to put it back on the same control
 * (or the next one that can act): a keyboard player keeps their place from move to move. */
function focusedControl() {
  const active = document.activeElement;
  if (!active || active === document.body || !$("table-panel").contains(active)) return null;
  if (active.dataset.row) return `#rows .row[data-row="${active.dataset.row}"]`;
  if (active.dataset.action) return `#table-panel [data-action="${active.dataset.action}"]`;
  if (active.id) return `#${active.id}`;
  return "#table-panel";
}

function usable(node) {
  return node && node.isConnected && !node.disabled && !node.closest("[hidden]") && (node.tabIndex >= 0 || node === $("table-panel"));
}

function restoreFocus(selector) {
  if (!selector) return;
  const active = document.activeElement;
  if (active && active !== document.body && usable(active)) return;
  const candidates = [
    document.querySelector(selector),
    document.querySelector("#start-choice button:not([disabled])"),
    document.querySelector("#joker-choice button:not([disabled])"),
    document.querySelector("#rows .row[tabindex='0']"),
    $("deck"),
    $("pass"),
    $("table-panel"),
  ];
  const target = candidates.find(usable);
  target?.focus({ preventScroll: true });
}

function render() {
  const g = state.game;
  const focus = focusedControl();
  // read before anything changes: reading a size after a change makes the browser lay the page out
  const log = $("log");
  const logFollowed = !log.dataset.drawn || log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  const mine = isMyTurn();
  const canAct = live && !waiting && mine;
  $("game-title").textContent = g.name;
  $("rules-text").textContent = rulesText(g.rules_summary);
  $("invite-link").value = `${location.origin}/games/${gameId}`;
  Object.assign(document.body.dataset, { move: state.move_number, status: g.status, turn: mine ? "mine" : "other" });
  $("turn").textContent = turnText();
  $("turn").className = `turn ${mine ? "mine" : ""}`;
  renderStatus();
  const canDraw = canAct && state.legal.includes("d");
  const hintAction = hint && hint.move === state.move_number ? hint.action : null;
  const deck = $("deck");
  deck.disabled = !canDraw;
  deck.classList.toggle("hinted", hintAction === "d");
  deck.dataset.depth = String(Math.min(5, Math.ceil(state.cards_in_deck / 12)));
  $("deck-count").textContent = state.cards_in_deck;
  deck.setAttribute(
    "aria-label",
    [tn("the deck: {n} card left", "the deck: {n} cards left", state.cards_in_deck), canDraw ? t("draw a card (D)") : "", hintAction === "d" ? t("the hint's move") : ""].filter(Boolean).join(". "),
  );
  $("pending").replaceChildren(
    state.pending_card !== null ? el("span", { class: "pending-card" }, el("span", { class: "small pending-label" }, t("drawn:")), card(state.pending_card, state.cards)) : "",
  );
  $("pass").hidden = !state.legal.includes("x");
  $("pass").disabled = !canAct;
  renderJokerChoice(canAct);
  renderStartChoice(canAct);
  $("hint").hidden = !(hintsAvailable && mine && !g.seats[state.you]?.resigned);
  $("hint").disabled = !live;
  if (!hint || hint.move !== state.move_number) $("hint-text").textContent = "";

  const actionFor = (i) => {
    if (!canAct) return null;
    const place = `p${i + 1}`;
    const take = `t${i + 1}`;
    if (state.legal.includes(place)) return place;
    if (state.legal.includes(take)) return take;
    return null;
  };
  $("rows").replaceChildren(rows(state, state.cards, actionFor, act, hintAction));
  renderRemoved();
  const online = g.seats.filter((s) => s.online).map((s) => s.seat);
  const playing = g.status === "playing";
  const resigned = g.seats.filter((s) => s.resigned).map((s) => s.seat);
  const away = playing ? g.seats.filter((s) => s.away && !s.resigned).map((s) => s.seat) : [];
  $("players").replaceChildren(
    players(state, state.cards, names(), { you: state.you, toMove: state.to_move, online, away, resigned, clock: clockTimers(), thinkingSlots: true }),
  );
  showThinking();
  renderLog(logFollowed);
  renderClockInfo();
  renderAway();
  renderJoin();
  renderInfo();
  renderRematchOffer();
  renderFinal();
  chat.access({ canChat: state.you !== null || user !== null, connected: live, loggedIn: user !== null });
  restoreFocus(focus);
}

/** The move log: the new entries added to those shown (the whole log again for a new deal or when
 * it is not the one shown), kept scrolled to its end unless a reader scrolled back. */
function renderLog(followed) {
  const log = $("log");
  const entries = state.log;
  const shown = log.children;
  const same = shown.length <= entries.length && log.dataset.deal === String(state.deal)
    && (shown.length === 0 || Number(shown[shown.length - 1].value) === entries[shown.length - 1].number);
  const line = (e) => el("li", { value: e.number, dataset: { move: e.move, seat: e.seat } }, entryText(e, names(), state.cards, state.game.rules.edition));
  if (same) log.append(...entries.slice(shown.length).map(line));
  else log.replaceChildren(...entries.map(line));
  log.dataset.deal = String(state.deal);
  if (followed) log.scrollTop = log.scrollHeight;
  log.dataset.drawn = "yes";
}

/** The round, the deck and the last round; once the game is over, its result instead. */
function renderStatus() {
  const g = state.game;
  const over = !["open", "playing"].includes(g.status);
  const matchText = state.match.games > 1 ? ` · ${t("game {game} of {games}", { game: state.deal, games: state.match.games })}` : "";
  $("round").hidden = over || g.status === "open";
  $("round").textContent = `${state.start_picks_left > 0 ? t("Before round 1") : t("Round {round}", { round: state.round })}${matchText}`;
  const info = $("deck-info");
  if (g.status === "finished") {
    info.hidden = false;
    info.textContent = resultText();
    info.className = "pill result-pill";
    return;
  }
  info.hidden = over;
  const before = state.cards_before_last_round;
  info.textContent = state.last_round
    ? t("Last round! {left}", { left: tn("{n} card left", "{n} cards left", Math.max(0, state.cards_in_deck)) })
    : `${tn("{n} card left", "{n} cards left", state.cards_in_deck)} · ${t("{n} before the last-round card", { n: before })}`;
  info.className = `pill ${state.last_round ? "warn" : ""}`;
}

/** Two players: the cards out of the game (the rows nobody took), and which row left last. */
function renderRemoved() {
  const box = $("removed");
  const two = state.game.rules.players === 2 && state.game.status !== "open";
  box.hidden = !two;
  if (!two) return box.replaceChildren();
  const out = state.removed_cards ?? [];
  const total = out.reduce((a, b) => a + b, 0);
  const parts = [el("h3", { class: "removed-title" }, t("Out of this game"), " ", el("span", { class: "muted" }, tn("({n} card)", "({n} cards)", total)))];
  parts.push(el("p", { class: "muted" }, t("Two players: the row nobody takes leaves the game at the end of each round.")));
  if (lastRemoved) {
    parts.push(el("p", { class: "removed-last" }, t("Round {round}: row {row} left the game: {cards}.", { round: lastRemoved.round, row: lastRemoved.row, cards: cardNames(lastRemoved.cards, state.cards) })));
  }
  parts.push(total ? collection(out, state.cards, state.colours) : el("p", { class: "muted" }, t("None yet.")));
  box.replaceChildren(...parts);
}

/** The running clocks of the state as render.js draws them: the turn of the seat to move, and each
 * person's bank (the bank of the seat to move runs too; a bot's seat never runs a clock). They count
 * from when the state arrived, on this page's own clock: the server's seconds_left, not its deadline,
 * so a skewed clock does not matter. */
function clockTimers() {
  const clock = state.clock;
  if (!clock || state.game.status !== "playing") return null;
  const endsAt = (seconds) => stateArrived + seconds * 1000;
  const running = clock.seconds_left !== null && state.to_move !== null && live;
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

/** Every running clock pill on the page, brought to now: never below 0, red under 10 s; and the
 * reconnection banner's countdown. */
function tick() {
  const now = performance.now();
  for (const pill of document.querySelectorAll("[data-ends-at]")) {
    const left = Math.max(0, (Number(pill.dataset.endsAt) - now) / 1000);
    const text = timeLeft(left);
    const time = pill.querySelector(".time");
    if (time.textContent !== text) time.textContent = text;
    pill.classList.toggle("low", left < 10);
  }
  if (!live) showConnection();
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

/** Your seat played by a bot: after a clock ran out (offered back), or for good after resigning. */
function renderAway() {
  const g = state.game;
  const mine = state.you !== null && g.status === "playing" ? g.seats[state.you] : null;
  $("away-banner").hidden = !(mine && (mine.away || mine.resigned));
  $("away-text").textContent = mine?.resigned
    ? t("You resigned: a bot finishes the game for you")
    : t("Your time ran out: a bot is playing for you");
  $("reclaim").hidden = !!mine?.resigned;
  $("reclaim").disabled = reclaiming || !live;
}

function reclaim() {
  if (!sendMessage({ type: "reclaim" })) {
    toast(t("not connected: reconnecting…"));
    return;
  }
  reclaiming = true;
  $("reclaim").disabled = true;
}

/** The table's flags (private, rated), how many watch, its rules, what you may do with the game
 * (resign, cancel), and the sound of your turn (players only). */
function renderInfo() {
  const g = state.game;
  const flags = [];
  if (g.private) flags.push(el("span", { class: "pill flag private", title: t("not listed in the lobby: only the invite link leads here") }, t("private")));
  if (g.rated) flags.push(el("span", { class: "pill flag rated", title: t("the players' ratings move when it is over") }, t("rated")));
  flags.push(el("span", { class: "pill flag spectators", title: t("spectators: connections watching without a seat") }, tn("{n} spectator", "{n} spectators", state.spectators)));
  $("table-flags").replaceChildren(...flags);
  const seated = state.you !== null;
  const mySeat = seated ? g.seats[state.you] : null;
  const canResign = seated && g.status === "playing" && !mySeat.resigned;
  const canCancel = seated && g.status === "open" && g.creator_seat === state.you;
  $("resign").hidden = !canResign;
  $("cancel-game").hidden = !canCancel;
  $("resign").disabled = $("cancel-game").disabled = !live;
  $("table-actions").hidden = !(canResign || canCancel);
  $("sound-setting").hidden = !seated || !["open", "playing"].includes(g.status);
  $("sound-toggle").checked = soundWanted();
  $("invite-panel").hidden = !(g.status === "open" && g.seats.some((s) => s.free));
}

/** Confirm a step that cannot be undone, in a modal dialog (Escape or "no" keeps things as they are). */
function confirmStep({ title, text, yes, no }) {
  const dialog = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  $("confirm-no").textContent = no;
  dialog.returnValue = "";
  dialog.showModal();
  $("confirm-no").focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
  });
}

async function resign() {
  const ok = await confirmStep({
    title: t("Resign this game?"),
    text: t("A bot plays your seat to the end, and you cannot take it back. On a rated table you rank below every other player."),
    yes: t("Resign"),
    no: t("Keep playing"),
  });
  if (!ok) return;
  if (!sendMessage({ type: "resign" })) toast(t("not connected: reconnecting…"));
}

async function cancelGame() {
  const ok = await confirmStep({
    title: t("Cancel this game?"),
    text: t("Nobody can join it any more, and it leaves the lobby."),
    yes: t("Cancel the game"),
    no: t("Keep waiting"),
  });
  if (!ok) return;
  try {
    await api(`/api/games/${encodeURIComponent(gameId)}/cancel`, { method: "POST", token: seat?.token });
  } catch (err) {
    toast(err.message);
  }
}

function renderJokerChoice(canAct) {
  const box = $("joker-choice");
  const choices = state.legal.filter((a) => a.startsWith("j:"));
  box.hidden = !choices.length;
  if (!choices.length) return box.replaceChildren();
  const joker = state.cards[state.jokers_to_name[0]]?.name ?? t("joker");
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", t("Your {joker} counts as:", { joker }));
  box.replaceChildren(
    el("span", {}, t("Your {joker} counts as:", { joker }), " "),
    ...choices.map((a) => {
      const token = a.slice(2);
      const info = state.cards.find((c) => c.token === token);
      return el(
        "button",
        { type: "button", title: `${info.name} (${info.token})`, "aria-label": t("name it {colour} ({key})", { colour: info.name, key: info.token }), onclick: () => act(a), dataset: { action: a }, disabled: !canAct },
        card(info.id, state.cards, { mini: true, decorative: true }),
      );
    }),
  );
}

/** While starting colours are chosen (variant): who chooses, and for the chooser a button per free colour. */
function renderStartChoice(canAct) {
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
            { type: "button", title: `${info.name} (${info.token})`, "aria-label": t("choose {colour}", { colour: info.name }), onclick: () => act(a), dataset: { action: a }, disabled: !canAct },
            card(info.id, state.cards, { decorative: true }),
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
  const nameInput = el("input", { id: "join-name", maxlength: 40, placeholder: t("your name"), value: typed ? typed.value : myName(), autocomplete: "nickname" });
  const needsLogin = g.rated && user === null;
  const seatLine = (s) => {
    let what;
    if (s.free && s.reserved) what = el("span", { class: "muted" }, t("kept for its player (a rematch)"));
    else if (s.free) what = el("button", { type: "button", dataset: { seat: s.seat }, disabled: needsLogin || !live, onclick: () => join(s.seat, user === null ? nameInput.value : null) }, t("Sit here"));
    else what = el("strong", {}, seatName(s));
    return el("div", {}, t("Seat {seat}:", { seat: s.seat + 1 }), " ", what);
  };
  box.replaceChildren(
    el("h2", {}, t("Take a seat")),
    user === null ? el("label", {}, t("Your name"), " ", nameInput) : el("p", {}, t("You sit down as {name}.", { name: user })),
    needsLogin ? el("p", { class: "small" }, t("This table is rated: log in to sit down.")) : null,
    el("div", { class: "seats-join" }, g.seats.map(seatLine)),
  );
  if (hadFocus) nameInput.focus();
}

async function join(seatIndex, name) {
  const body = { seat: seatIndex };
  if (name !== null) {
    name = name.trim();
    if (!name) {
      toast(t("Type your name first."));
      return;
    }
    body.name = name;
  }
  try {
    const grant = await api(`/api/games/${encodeURIComponent(gameId)}/join`, { method: "POST", body });
    if (name) rememberName(name);
    sit(grant);
  } catch (err) {
    toast(err.message);
  }
}

/** Sit in a seat granted by the server (SeatGrant): kept by this browser, and said over the socket. */
function sit(grant) {
  saveSeat(gameId, grant.seat, grant.token);
  seat = { seat: grant.seat, token: grant.token };
  sendMessage({ type: "hello", token: grant.token });
}

/** A rematch's seat kept for a guest who played the game before: taken with the token of that game,
 * which this browser kept, without asking (the page of the new game opened from anywhere). */
async function claimKeptSeat() {
  const g = state.game;
  if (claimTried || state.you !== null || g.status !== "open" || !g.rematch_of) return;
  const old = loadSeat(g.rematch_of);
  if (!old || !g.seats[old.seat]?.reserved) return;
  claimTried = true;
  try {
    const grant = await api(`/api/games/${encodeURIComponent(g.rematch_of)}/rematch`, { method: "POST", token: old.token });
    if (grant.game.id === gameId && grant.token) {
      sit(grant);
    }
  } catch (err) {
    toast(err.message);
  }
}

/** The rematch of this game: made now if nobody has yet (the same seats, rules and clock, a new
 * deal), then this page goes there, in its seat (a guest's by their token of this game). */
async function goToRematch() {
  if (state.you === null) {
    if (rematchId) location.assign(`/games/${encodeURIComponent(rematchId)}`);
    return;
  }
  $("rematch-go").disabled = true;
  document.querySelector("#final .rematch")?.setAttribute("disabled", "");
  try {
    const grant = await api(`/api/games/${encodeURIComponent(gameId)}/rematch`, { method: "POST", token: seat?.token });
    if (grant.token) saveSeat(grant.game.id, grant.seat, grant.token);
    location.assign(`/games/${encodeURIComponent(grant.game.id)}`);
  } catch (err) {
    toast(err.message);
    $("rematch-go").disabled = false;
    document.querySelector("#final .rematch")?.removeAttribute("disabled");
  }
}

function renderRematchOffer() {
  const offer = $("rematch-offer");
  offer.hidden = !(rematchId && state.game.status === "finished");
  $("rematch-go").textContent = state.you === null ? t("Watch the rematch") : t("Go to the rematch");
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
    parts.push(el("h2", {}, resultText()));
  } else {
    parts.push(el("h2", {}, t("Game {game} of {games} is over", { game: last.deal, games: state.match.games })));
  }
  parts.push(el("h3", {}, state.match.games > 1 ? t("Scoring of game {game}", { game: last.deal }) : t("Scoring")), scoring(last, state.cards, n));
  if (state.match.games > 1) {
    parts.push(el("p", {}, t("Match totals:"), " ", state.match.totals.map((total, i) => `${n[i]} ${total}`).join(" · ")));
  }
  if (finished && state.ratings?.length) {
    parts.push(
      el(
        "p",
        { class: "ratings small" },
        t("Ratings:"),
        " ",
        state.ratings.map((r) => t("{name} {before} → {after}", { name: n[r.seat], before: num(r.before.ordinal, 1), after: num(r.after.ordinal, 1) })).join(" · "),
      ),
    );
  }
  if (finished) {
    const links = [];
    if (state.you !== null || rematchId) {
      const made = rematchId !== null;
      const label = state.you === null ? t("Watch the rematch") : made ? t("Go to the rematch") : t("Rematch");
      links.push(
        el("button", { type: "button", class: "rematch", title: t("the same seats, rules and clock, a new deal"), disabled: !live && state.you !== null, onclick: goToRematch }, label),
        " ",
      );
    }
    for (const d of deals) {
      const several = deals.length > 1;
      links.push(
        el("a", { class: "button secondary", href: `/games/${encodeURIComponent(gameId)}/replay?game=${d.deal}` }, several ? t("Replay (game {game})", { game: d.deal }) : t("Replay")), " ",
        el("a", { class: "button secondary", href: `/api/games/${encodeURIComponent(gameId)}/record?game=${d.deal}`, download: `coloretto-${gameId}-${d.deal}.json` }, several ? t("Download record (game {game})", { game: d.deal }) : t("Download record")), " ",
      );
    }
    parts.push(el("p", { class: "actions" }, links, el("a", { class: "button secondary", href: "/" }, t("Back to the lobby"))));
    parts.push(reviewSection(deals));
  }
  // the focus stays on the rematch button when the box is drawn again
  const focused = document.activeElement?.classList.contains("rematch");
  box.replaceChildren(...parts);
  if (focused) box.querySelector(".rematch")?.focus();
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

// ---------------------------------------------------------------- hints and keys

function askHint() {
  if (!state || !isMyTurn() || !hintsAvailable || !live) return;
  if (!sendMessage({ type: "hint" })) return;
  $("hint-text").textContent = t("thinking…");
  hint = null;
}

function showHint(msg) {
  hint = { move: msg.move, action: msg.best };
  if (!msg.best) {
    $("hint-text").textContent = t("No hint: nothing to choose.");
  } else {
    const lines = msg.actions.slice(0, 3).map((a) =>
      t("{action}: {chance} to win, {points}", {
        action: describeAction(a.action, state.cards),
        chance: pct(a.win_probability),
        points: tnDecimal("{n} point", "{n} points", a.expected_score, 1),
      }),
    );
    $("hint-text").replaceChildren(el("strong", {}, t("Hint: {action}", { action: describeAction(msg.best, state.cards) })), el("br"), el("span", { class: "muted" }, lines.join(" · ")));
  }
  if (state) render();
}

function onKey(event) {
  if (!state || event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  const target = event.target;
  if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement) return;
  if ($("confirm").open) return;
  unlockAudio();
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
  $("resign").addEventListener("click", resign);
  $("cancel-game").addEventListener("click", cancelGame);
  $("rematch-go").addEventListener("click", goToRematch);
  $("reconnect-now").addEventListener("click", () => {
    retry = Math.max(1, retry);
    connect();
  });
  $("sound-toggle").addEventListener("change", (event) => {
    setSoundWanted(event.target.checked);
    if (event.target.checked) unlockAudio(); // a click: the browser lets the page play sound from now
  });
  document.addEventListener("pointerdown", () => { if (soundWanted()) unlockAudio(); }, { once: true });
  window.addEventListener("online", () => { if (!live) connect(); });
  // a quarter of a second, so that each whole second shows on time; the text changes once a second
  setInterval(tick, 250);
  setInterval(heartbeat, 5000);
  $("copy-link").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("invite-link").value);
      toast(t("Invite link copied"), "info");
    } catch {
      $("invite-link").select();
    }
  });
  document.addEventListener("keydown", onKey);
  setLive(false);
  try {
    const options = await api("/api/options");
    hintsAvailable = options.hints;
    chat.setLimit(options.limits.chat_max_chars);
  } catch { /* hints stay off */ }
  connect();
}

main();
