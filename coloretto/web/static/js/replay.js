// The replay viewer: step through every position of a finished game.
import { api, el, gameIdFromPath, toast } from "./common.js";
import { card, players, rows, scoring, seatNames } from "./render.js";

const gameId = gameIdFromPath();
const deal = Number(new URLSearchParams(location.search).get("game") || 1);
let replay = null;
let index = 0;
let timer = null;
const $ = (id) => document.getElementById(id);

function show(i) {
  index = Math.max(0, Math.min(replay.frames.length - 1, i));
  const frame = replay.frames[index];
  const names = seatNames(replay.game);
  const view = { ...frame, colours: replay.colours };
  $("slider").value = index;
  $("position").textContent = `move ${index} of ${replay.frames.length - 1}`;
  $("move-text").textContent = frame.entry ? `${frame.entry.number}. ${frame.entry.text}` : "The deal, before the first move.";
  $("round").textContent = frame.start_picks_left > 0 ? `Before round 1 · ${frame.start_picks_left} starting colours to choose` : `Round ${frame.round}`;
  $("deck-info").textContent = frame.cards_before_last_round === null ? `Last round · ${frame.cards_in_deck} cards left` : `${frame.cards_in_deck} cards left · ${frame.cards_before_last_round} before the last-round card`;
  $("pending").replaceChildren(frame.pending_card !== null ? el("span", {}, "drawn: ", card(frame.pending_card, replay.cards)) : "");
  $("rows").replaceChildren(rows(view, replay.cards));
  $("players").replaceChildren(players(view, replay.cards, names, { toMove: frame.to_move }));
  const atEnd = index === replay.frames.length - 1;
  $("result").hidden = !atEnd;
  if (atEnd) $("result").replaceChildren(el("h2", {}, "Scoring"), scoring(replay.result, replay.cards, names));
}

function togglePlay() {
  if (timer) {
    clearInterval(timer);
    timer = null;
    $("play").textContent = "▶ play";
    return;
  }
  if (index === replay.frames.length - 1) show(0);
  $("play").textContent = "⏸ pause";
  timer = setInterval(() => {
    if (index >= replay.frames.length - 1) togglePlay();
    else show(index + 1);
  }, 600);
}

async function main() {
  try {
    replay = await api(`/api/games/${encodeURIComponent(gameId)}/replay?game=${deal}`);
  } catch (err) {
    $("controls").hidden = true;
    document.querySelector(".table-layout").hidden = true;
    $("move-text").replaceChildren(err.message, " ", el("a", { href: `/games/${encodeURIComponent(gameId)}` }, "Back to the table"));
    toast(err.message);
    return;
  }
  const title = replay.deals > 1 ? `${replay.game.name} — game ${deal} of ${replay.deals}` : replay.game.name;
  $("game-title").textContent = `Replay: ${title}`;
  document.title = `Coloretto — replay of ${title}`;
  $("rules-text").textContent = replay.game.rules_text;
  $("download").href = `/api/games/${encodeURIComponent(gameId)}/record?game=${deal}`;
  $("download").setAttribute("download", `coloretto-${gameId}-${deal}.json`);
  if (replay.deals > 1) {
    const links = [];
    for (let d = 1; d <= replay.deals; d++) links.push(d === deal ? el("strong", {}, ` game ${d} `) : el("a", { href: `?game=${d}` }, ` game ${d} `));
    $("deals").replaceChildren("Games of the match:", ...links);
  }
  $("slider").max = replay.frames.length - 1;
  $("slider").addEventListener("input", (e) => show(Number(e.target.value)));
  $("first").addEventListener("click", () => show(0));
  $("prev").addEventListener("click", () => show(index - 1));
  $("next").addEventListener("click", () => show(index + 1));
  $("last").addEventListener("click", () => show(replay.frames.length - 1));
  $("play").addEventListener("click", togglePlay);
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement && e.target.type !== "range") return;
    if (e.key === "ArrowRight") show(index + 1);
    else if (e.key === "ArrowLeft") show(index - 1);
    else if (e.key === "Home") show(0);
    else if (e.key === "End") show(replay.frames.length - 1);
    else if (e.key === " ") { e.preventDefault(); togglePlay(); }
  });
  show(0);
}

main();
