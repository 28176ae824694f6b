// The replay viewer: step through every position of a finished game; with a review, the win-chance
// graph, the marks and luck of the moves, the best move outlined, each player's summary; and "what
// if": another move tried from any position, with the analysis of that line.
import { api, el, gameIdFromPath, rulesText, toast } from "./common.js";
import { num, pct, t, tn, translatedLegend } from "./i18n.js";
import { card, entryText, players, rows, scoring, seatNames } from "./render.js";
import {
  MARK_SIGNS, actionRow, describeAction, linesTable, luckClass, markName, moveList, reviewWidget, seatChances, summaryTable, winChart,
} from "./review.js";

const gameId = gameIdFromPath();
const deal = Number(new URLSearchParams(location.search).get("game") || 1);
let replay = null;
let review = null; // the review's JSON, once there is one
let graph = null; // {chart, setIndex}
let index = 0;
let timer = null;
// what if: the line of moves tried from position ``base``, and each step's answer
let whatif = null; // {base, moves: [], answers: [answer after 0, 1, … moves], busy}
const $ = (id) => document.getElementById(id);

function names() {
  return seatNames(replay.game);
}

/** A log entry in words, in the page's language. */
function describe(entry) {
  return entryText(entry, names(), replay.cards, replay.game.rules.edition);
}

/** The table: a frame's rows, draw area and players; ``actionFor(i)`` makes row i clickable. */
function renderTable(frame, { actionFor = () => null, onAct = null, best = null, played = null } = {}) {
  const view = { ...frame, colours: replay.colours };
  $("round").textContent = frame.start_picks_left > 0
    ? `${t("Before round 1")} · ${tn("{n} starting colour to choose", "{n} starting colours to choose", frame.start_picks_left)}`
    : t("Round {round}", { round: frame.round });
  const left = tn("{n} card left", "{n} cards left", frame.cards_in_deck);
  $("deck-info").textContent = frame.cards_before_last_round === null
    ? `${t("Last round")} · ${left}`
    : `${left} · ${t("{n} before the last-round card", { n: frame.cards_before_last_round })}`;
  $("deck-count").textContent = ` · ${frame.cards_in_deck}`;
  $("pending").replaceChildren(frame.pending_card !== null ? el("span", {}, `${t("drawn:")} `, card(frame.pending_card, replay.cards)) : "");
  $("rows").replaceChildren(rows(view, replay.cards, actionFor, onAct));
  $("players").replaceChildren(players(view, replay.cards, names(), { toMove: frame.to_move }));
  // the best move outlined (and the one played tagged): a row, or the draw area for a draw
  const drawArea = $("draw-area");
  drawArea.classList.toggle("best-move", best === "d");
  drawArea.classList.toggle("played-move", played === "d" && best !== "d");
  const drawTags = [];
  if (best === "d") drawTags.push(el("span", { class: "pill best-pill" }, t("best: draw")));
  if (played === "d" && best !== "d") drawTags.push(el("span", { class: "pill played-pill" }, t("played: draw")));
  $("draw-tag").replaceChildren(...drawTags);
  const bestRow = best ? actionRow(best) : null;
  const playedRow = played ? actionRow(played) : null;
  for (const node of $("rows").querySelectorAll(".row")) {
    const n = Number(node.dataset.row);
    if (n === bestRow) {
      node.classList.add("best-move");
      node.append(el("span", { class: "pill best-pill" }, t("best")));
      node.setAttribute("aria-label", `${node.getAttribute("aria-label")}, ${t("the best move: {move}", { move: describeAction(best, replay.cards) })}`);
    }
    if (n === playedRow && played !== best) {
      node.classList.add("played-move");
      node.append(el("span", { class: "pill played-pill" }, t("played")));
    }
  }
}

function show(i) {
  if (whatif) closeWhatif(false);
  index = Math.max(0, Math.min(replay.frames.length - 1, i));
  const frame = replay.frames[index];
  const n = names();
  $("slider").value = index;
  $("position").textContent = t("move {number} of {moves}", { number: index, moves: replay.frames.length - 1 });
  document.body.dataset.position = index;
  $("move-text").textContent = frame.entry ? `${frame.entry.number}. ${describe(frame.entry)}` : t("The deal, before the first move.");
  const move = review ? review.moves[index] : null; // the move played from this position
  const decision = move ? move.decision : null;
  renderTable(frame, { best: decision ? decision.best : null, played: decision ? move.played : null });
  const atEnd = index === replay.frames.length - 1;
  $("result").hidden = !atEnd;
  if (atEnd) {
    $("result").replaceChildren(el("h2", {}, t("Scoring")), scoring(replay.result, replay.cards, n), review ? summaryTable(review, n) : "");
  }
  $("whatif").hidden = atEnd;
  if (review) {
    graph?.setIndex(index);
    renderDecision();
    for (const li of $("moves-box").querySelectorAll("li")) {
      const here = Number(li.dataset.move) === index + 1;
      li.classList.toggle("current", here);
      li.querySelector("button").setAttribute("aria-current", here ? "step" : "false");
      if (here) keepInView(li, $("moves-box"));
    }
  }
}

/** Scrolls the move list (only it, not the page) so that the current move shows. */
function keepInView(item, box) {
  const top = item.offsetTop; // the box is positioned: the item's offsetParent
  if (top < box.scrollTop) box.scrollTop = top;
  else if (top + item.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = top + item.offsetHeight - box.clientHeight;
}

/** The decision taken at the shown position (the move played from it): its mark, the best move and the
 * lines; the luck of the card that the move leading here turned over; everyone's win chance now. */
function renderDecision() {
  const n = names();
  const parts = [];
  const position = review.positions[index];
  const move = review.moves[index];
  const previous = index > 0 ? review.moves[index - 1] : null;
  if (previous && previous.luck) {
    const luck = previous.luck;
    const info = replay.cards.find((c) => c.token === luck.card);
    const cardName = info ? info.name : luck.card;
    const what = luck.kind === "bonus"
      ? t("The bonus card {card} changed the win chances by:", { card: cardName })
      : t("The card drawn, {card}, changed the win chances by:", { card: cardName });
    parts.push(
      el(
        "p",
        { class: "luck-line" },
        `${what} `,
        luck.win.flatMap((w, seat) => [seat ? ", " : "", `${n[seat]} `, el("span", { class: `luck ${luckClass(w)}` }, pct(w, { signed: true }))]),
        luck.outcomes && luck.outcomes.length
          ? el(
            "span",
            { class: "small muted" },
            ` ${tn("(against the average of {n} card that could have come)", "(against the average of {n} cards that could have come)", luck.outcomes.length)}`,
          )
          : null,
      ),
    );
  }
  if (move) {
    const frame = replay.frames[index + 1];
    const text = frame?.entry ? describe(frame.entry) : move.played;
    const d = move.decision;
    if (!d) {
      parts.push(el("p", {}, el("strong", {}, `${t("Move {number}:", { number: move.number })} `), text, el("span", { class: "muted" }, ` — ${t("forced (the only legal move)")}`)));
    } else {
      const mark = d.mark ? el("span", { class: `mark ${d.mark}` }, ` ${MARK_SIGNS[d.mark]} ${markName(d.mark)}`) : null;
      parts.push(el("p", { class: "decision-played" }, el("strong", {}, `${t("Move {number}:", { number: move.number })} `), text, mark));
      if (d.best !== move.played) {
        parts.push(
          el(
            "p",
            { class: "decision-best" },
            `${t("Best:")} `,
            el("strong", {}, describeAction(d.best, replay.cards)),
            ` ${t("(outlined) · {name} gave away {chance} win chance and {points} points", { name: n[move.seat], chance: pct(d.win_loss), points: num(d.score_loss, 1) })}`,
            el("span", { class: "small muted" }, ` ${t("(noise ± {noise}) · accuracy {accuracy}", { noise: pct(d.noise), accuracy: pct(d.accuracy / 100) })}`),
          ),
        );
      } else {
        parts.push(el("p", { class: "decision-best" }, t("The best move, as the search plays it (outlined).")));
      }
      parts.push(
        linesTable(d.lines, replay.cards, {
          played: move.played,
          best: d.best,
          onTry: (action) => openWhatif([action]),
          caption: t("The search's lines from this position (a move tries it: what if)"),
        }),
      );
    }
  } else {
    parts.push(el("p", {}, t("The game is over.")));
  }
  if (position) parts.push(el("p", { class: "small" }, t("Win chances here:")), seatChances(position.win, position.score, n));
  $("decision").hidden = false;
  $("decision-body").replaceChildren(...parts);
}

function togglePlay() {
  if (timer) {
    clearInterval(timer);
    timer = null;
    $("play").textContent = t("▶ play");
    return;
  }
  if (index === replay.frames.length - 1) show(0);
  $("play").textContent = t("⏸ pause");
  timer = setInterval(() => {
    if (index >= replay.frames.length - 1) togglePlay();
    else show(index + 1);
  }, 600);
}

/** The next (``step`` 1) or previous (-1) marked move from the shown position: shows the position before it. */
function jumpToMark(step) {
  if (!review) return;
  for (let k = index + step; k >= 0 && k < review.moves.length; k += step) {
    if (review.moves[k].decision && review.moves[k].decision.mark) return show(k);
  }
  toast(step > 0 ? t("No marked move after this one") : t("No marked move before this one"), "info");
}

// ------------------------------------------------------------------ what if

function whatifPath() {
  return `/api/games/${encodeURIComponent(gameId)}/whatif`;
}

async function whatifStep(moves) {
  const session = whatif; // an answer that comes after this what-if was left belongs to no one
  session.busy = true;
  renderWhatif();
  try {
    const answer = await api(whatifPath(), { method: "POST", body: { game: deal, upto: session.base, moves } });
    if (whatif !== session) return;
    session.moves = moves;
    session.answers = session.answers.slice(0, moves.length);
    session.answers[moves.length] = answer;
  } catch (err) {
    if (whatif === session) toast(err.code === "busy" ? t("The server is busy: try again in a moment.") : err.message);
  } finally {
    if (whatif === session) {
      session.busy = false;
      renderWhatif();
    }
  }
}

/** What if, from the shown position: ``moves`` played at once (a line of the decision), or none. */
function openWhatif(moves = []) {
  if (timer) togglePlay();
  whatif = { base: index, moves: [], answers: [], busy: false };
  document.body.dataset.whatif = "on";
  $("whatif-start").hidden = true;
  $("whatif-body").hidden = false;
  $("whatif-flag").hidden = false;
  $("decision").hidden = true;
  $("whatif-heading").focus(); // the button that opened it may be gone: the focus goes to the panel
  if (moves.length) whatifStep([]).then(() => whatif && whatifStep(moves));
  else whatifStep([]);
}

function closeWhatif(redraw = true) {
  whatif = null;
  delete document.body.dataset.whatif;
  $("whatif-start").hidden = false;
  $("whatif-body").hidden = true;
  $("whatif-flag").hidden = true;
  $("decision").hidden = !review;
  if (redraw) {
    show(index);
    $("whatif-start").focus();
  }
}

function tryMove(action) {
  if (!whatif || whatif.busy) return;
  whatifStep([...whatif.moves, action]);
}

function renderWhatif() {
  const n = names();
  const answer = whatif.answers[whatif.moves.length];
  $("whatif-undo").disabled = whatif.busy || whatif.moves.length === 0;
  const steps = whatif.moves.map((m, i) => {
    const entry = whatif.answers[i + 1]?.frame?.entry;
    return el("li", {}, entry ? describe(entry) : describeAction(m, replay.cards));
  });
  $("whatif-line").replaceChildren(
    whatif.moves.length
      ? t("From move {number} of the game", { number: whatif.base })
      : t("From move {number} of the game: the position as it was.", { number: whatif.base }),
    whatif.moves.length ? el("ol", { class: "whatif-steps" }, steps) : "",
  );
  if (!answer) {
    $("whatif-legal").replaceChildren();
    $("whatif-analysis").replaceChildren(el("p", { class: "muted" }, whatif.busy ? t("analysing…") : t("no analysis")));
    return;
  }
  const legal = answer.legal || [];
  const best = answer.lines && answer.lines.length ? answer.lines[0].action : null;
  const frame = answer.frame;
  renderTable(frame, {
    best,
    actionFor: (i) => {
      if (whatif.busy) return null;
      if (legal.includes(`p${i + 1}`)) return `p${i + 1}`;
      if (legal.includes(`t${i + 1}`)) return `t${i + 1}`;
      return null;
    },
    onAct: tryMove,
  });
  $("move-text").textContent = frame.entry
    ? t("What if: {move}", { move: describe(frame.entry) })
    : t("What if: from move {number}", { number: whatif.base });
  $("whatif-legal").replaceChildren(
    legal.length ? el("span", { class: "small" }, frame.to_move !== null ? `${t("{name} to move:", { name: n[frame.to_move] })} ` : "") : "",
    ...legal.map((a) =>
      el("button", { type: "button", class: "secondary", dataset: { action: a }, disabled: whatif.busy, "aria-label": t("play {move}", { move: describeAction(a, replay.cards) }), onclick: () => tryMove(a) }, `${a} · ${describeAction(a, replay.cards)}`),
    ),
  );
  const parts = [];
  if (whatif.busy) parts.push(el("p", { class: "muted", role: "status" }, t("analysing…")));
  if (answer.lines && answer.lines.length) {
    parts.push(linesTable(answer.lines, replay.cards, { best, onTry: whatif.busy ? null : tryMove, caption: t("The search's lines from here (best outlined on the table)") }));
  } else if (!legal.length) {
    parts.push(el("p", {}, el("strong", {}, t("The game ends on this line."))));
  }
  if (answer.position) parts.push(el("p", { class: "small" }, legal.length ? t("Win chances here:") : t("The outcome:")), seatChances(answer.position.win, answer.position.score, n));
  $("whatif-analysis").replaceChildren(...parts);
}

// ------------------------------------------------------------------ the review

function showReview(data) {
  if (!data || !Array.isArray(data.positions)) return;
  if (data.positions.length !== replay.frames.length) {
    console.warn(`the review has ${data.positions.length} positions, the replay ${replay.frames.length} frames`);
  }
  review = data;
  const n = names();
  $("review-status").replaceChildren(
    el("p", { class: "small muted" }, tn("Reviewed at {n} search iteration a position. Click the graph or a move to go there.", "Reviewed at {n} search iterations a position. Click the graph or a move to go there.", data.budget)),
  );
  $("review-body").hidden = false;
  document.body.dataset.review = "done";
  for (const node of document.querySelectorAll(".review-keys")) node.hidden = false;
  const limits = data.thresholds || {};
  $("mark-legend").replaceChildren(
    el("span", { class: "mark inaccuracy" }, "?!"), ` ${t("inaccuracy (lost {share} or more of the win chance)", { share: pct(limits.inaccuracy ?? 0.05) })} · `,
    el("span", { class: "mark mistake" }, "?"), ` ${t("mistake ({share})", { share: pct(limits.mistake ?? 0.1) })} · `,
    el("span", { class: "mark blunder" }, "??"), ` ${t("blunder ({share}); a loss inside the search's noise is not marked.", { share: pct(limits.blunder ?? 0.2) })}`,
  );
  try {
    graph = winChart($("win-chart"), data, n, (i) => show(i));
  } catch (err) {
    $("mark-legend").append(el("p", { class: "small" }, t("The graph cannot be drawn: {problem}", { problem: err.message })));
  }
  $("moves-box").replaceChildren(moveList(data, replay.frames, n, replay.cards, (k) => show(k), describe));
  $("moves-panel").hidden = false;
  $("summary").replaceChildren(summaryTable(data, n));
  $("summary-panel").hidden = false;
  show(index);
}

// ------------------------------------------------------------------ start

function onKey(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const target = e.target;
  if (target instanceof HTMLInputElement && target.type !== "range") return;
  if (target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement) return;
  // the slider steps by itself on the arrows, Home and End
  const native = target instanceof HTMLInputElement && ["ArrowRight", "ArrowLeft", "Home", "End", "ArrowUp", "ArrowDown"].includes(e.key);
  if (native) return;
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (key === "ArrowRight") show(index + 1);
  else if (key === "ArrowLeft") show(index - 1);
  else if (key === "Home") show(0);
  else if (key === "End") show(replay.frames.length - 1);
  else if (key === "n") jumpToMark(1);
  else if (key === "p") jumpToMark(-1);
  else if (key === "Escape" && whatif) closeWhatif();
  else if (key === " ") {
    if (target instanceof HTMLButtonElement) return; // space presses the focused button
    e.preventDefault();
    togglePlay();
  } else return;
}

async function main() {
  try {
    replay = await api(`/api/games/${encodeURIComponent(gameId)}/replay?game=${deal}`);
  } catch (err) {
    $("controls").hidden = true;
    document.querySelector(".table-layout").hidden = true;
    $("review-panel").hidden = true;
    $("move-text").replaceChildren(err.message, " ", el("a", { href: `/games/${encodeURIComponent(gameId)}` }, t("Back to the table")));
    toast(err.message);
    return;
  }
  replay.cards = translatedLegend(replay.cards);
  const title = replay.deals > 1
    ? t("{name} — game {game} of {games}", { name: replay.game.name, game: deal, games: replay.deals })
    : replay.game.name;
  $("game-title").textContent = t("Replay: {title}", { title });
  document.title = t("Coloretto — replay of {title}", { title });
  $("rules-text").textContent = rulesText(replay.game.rules_summary);
  $("download").href = `/api/games/${encodeURIComponent(gameId)}/record?game=${deal}`;
  $("download").setAttribute("download", `coloretto-${gameId}-${deal}.json`);
  if (replay.deals > 1) {
    const links = [];
    for (let d = 1; d <= replay.deals; d++) {
      const label = ` ${t("game {game}", { game: d })} `;
      links.push(d === deal ? el("strong", {}, label) : el("a", { href: `?game=${d}` }, label));
    }
    $("deals").replaceChildren(t("Games of the match:"), ...links);
  }
  $("slider").max = replay.frames.length - 1;
  $("slider").addEventListener("input", (e) => show(Number(e.target.value)));
  $("first").addEventListener("click", () => show(0));
  $("prev").addEventListener("click", () => show(index - 1));
  $("next").addEventListener("click", () => show(index + 1));
  $("last").addEventListener("click", () => show(replay.frames.length - 1));
  $("play").addEventListener("click", togglePlay);
  $("whatif-start").addEventListener("click", () => openWhatif());
  $("whatif-back").addEventListener("click", () => closeWhatif());
  $("whatif-undo").addEventListener("click", () => {
    if (!whatif || whatif.busy || !whatif.moves.length) return;
    const moves = whatif.moves.slice(0, -1);
    if (whatif.answers[moves.length]) {
      whatif.moves = moves; // each step's answer is kept: no need to ask again
      renderWhatif();
    } else whatifStep(moves);
  });
  document.addEventListener("keydown", onKey);
  show(0);
  const widget = reviewWidget(gameId, deal, { link: false, onDone: showReview });
  $("review-status").replaceChildren(widget.node);
}

main();
