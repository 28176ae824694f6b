// Rendering shared by the table and the replay viewer: cards, rows, players, scoring, the moves.
import { el, timeLeft } from "./common.js";
import { list, t, tn } from "./i18n.js";

/** One card: colour, symbol and letter, so that no one needs to tell colours apart. */
export function card(id, legend, { mini = false, count = null } = {}) {
  const info = legend[id];
  const cls = info.kind === "colour" ? `c${id}` : info.kind;
  return el(
    "span",
    { class: `card ${cls}${mini ? " mini" : ""}`, title: info.name, "aria-label": info.name, dataset: { card: info.token } },
    el("span", { class: "sym", "aria-hidden": "true" }, info.symbol),
    info.kind === "colour" || info.kind === "joker" ? el("span", { class: "tok", "aria-hidden": "true" }, info.token) : null,
    count !== null ? el("span", { class: "count" }, count) : null,
  );
}

/** The rows of the table; ``actionFor(i)`` gives the click action for row i, or null. */
export function rows(state, legend, actionFor = () => null, onAct = null, hint = null) {
  return el(
    "div",
    { class: "rows" },
    state.rows.map((row, i) => {
      const action = actionFor(i);
      const slots = [];
      for (let k = row.cards.length; k < row.capacity; k++) slots.push(el("span", { class: "slot" }));
      const kind = action ? (action.startsWith("p") ? "can-place" : "can-take") : "";
      const label = row.taken ? t("taken") : action ? (action.startsWith("p") ? t("place here") : t("take")) : "";
      const node = el(
        "div",
        {
          class: `row ${row.taken ? "taken" : ""} ${kind}`,
          dataset: { row: i + 1, action: action || "" },
          role: action ? "button" : null,
          tabindex: action ? 0 : null,
          "aria-label": t("row {row}, {cards} of {capacity} cards", { row: i + 1, cards: row.cards.length, capacity: row.capacity }) + (label ? `, ${label}` : ""),
          onclick: action && onAct ? () => onAct(action) : null,
          onkeydown: action && onAct ? (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onAct(action); } } : null,
        },
        el("span", { class: "label" }, t("Row {row}", { row: i + 1 }), el("br"), el("span", { class: "small" }, `${row.cards.length}/${row.capacity}${row.taken ? ` · ${t("taken")}` : ""}`)),
        el("span", { class: "cards" }, row.cards.map((c) => card(c, legend)), slots),
        hint && hint === action ? el("span", { class: "pill warn hint-tag" }, t("hint")) : null,
        action ? el("span", { class: "hint-tag muted" }, action.startsWith("p") ? t("place: {row}", { row: i + 1 }) : t("take: {row}", { row: i + 1 })) : null,
      );
      return node;
    }),
  );
}

/** A collection as chips: one card per kind held, with its count. */
export function collection(counts, legend, colours) {
  const chips = [];
  counts.forEach((n, kind) => {
    if (n > 0 && (kind >= 7 || kind < colours)) chips.push(card(kind, legend, { mini: true, count: n }));
  });
  return el("div", { class: "collection" }, chips.length ? chips : el("span", { class: "muted small" }, t("no cards")));
}

/** A clock pill that the table ticks down (see table.js): while it runs ``endsAt`` is when it runs out,
 * on performance.now()'s scale; a stopped one shows ``seconds``. Red under 10 s. ``text`` is the pill's
 * words around the time, "{time} left" (translated: the time may come first or last). */
export function clockPill(kind, seconds, endsAt = null, { text = "{time}", title = "" } = {}) {
  const [prefix, suffix = ""] = text.split("{time}");
  return el(
    "span",
    { class: `pill ${kind}${seconds < 10 ? " low" : ""}`, role: "timer", title: title || null, dataset: endsAt === null ? null : { endsAt } },
    prefix,
    el("span", { class: "time" }, timeLeft(seconds)),
    suffix,
  );
}

/**
 * The players' panels. ``away``: seats a bot plays for now; ``clock``: {toMove, turn: {seconds, endsAt}
 * | null, banks: [{seconds, endsAt} | null (no bank shown)] | null}; ``thinkingSlots``: each panel gets a polite live region
 * that the table fills with "thinking…" while that seat's bot thinks (it exists before it is filled,
 * so that screen readers announce it).
 */
export function players(state, legend, names, { you = null, toMove = null, online = [], away = [], clock = null, thinkingSlots = false } = {}) {
  return el(
    "div",
    { class: "players" },
    state.players.map((p) => {
      const named = p.named_jokers.length
        ? el("div", { class: "small muted" }, t("named jokers: {jokers}", { jokers: p.named_jokers.map(([, c]) => legend[c].name).join(", ") }))
        : null;
      const turnClock = clock && clock.turn && p.seat === clock.toMove
        ? clockPill("countdown", clock.turn.seconds, clock.turn.endsAt, { text: t("{time} left"), title: t("time left for this move") })
        : null;
      const bank = clock && clock.banks && clock.banks[p.seat]
        ? clockPill("bank", clock.banks[p.seat].seconds, clock.banks[p.seat].endsAt, { text: t("bank {time}"), title: t("time left for all of this seat's moves") })
        : null;
      return el(
        "section",
        { class: `player ${p.seat === toMove ? "to-move" : ""} ${p.seat === you ? "me" : ""} ${away.includes(p.seat) ? "away" : ""}`, dataset: { seat: p.seat } },
        el(
          "header",
          {},
          el("span", { class: "name" }, names[p.seat]),
          p.seat === you ? el("span", { class: "pill" }, t("you")) : null,
          p.seat === toMove ? el("span", { class: "pill turn-pill" }, t("to move")) : null,
          turnClock,
          thinkingSlots ? el("span", { class: "thinking", "aria-live": "polite", dataset: { seat: p.seat } }) : null,
          p.out ? el("span", { class: "pill out" }, t("out this round")) : null,
          online.includes(p.seat) ? el("span", { class: "pill online" }, t("online")) : null,
          bank,
          el("span", { class: "score", title: t("best score right now") }, tn("{n} point", "{n} points", p.score)),
        ),
        away.includes(p.seat) ? el("div", { class: "away-note small" }, t("a bot plays for {name}", { name: names[p.seat] })) : null,
        collection(p.collection, legend, state.colours ?? 7),
        named,
      );
    }),
  );
}

function colourList(list, legend) {
  if (!list.length) return "—";
  return list.map((c) => `${legend[c.colour].symbol} ${legend[c.colour].name} ${c.cards}: ${c.points > 0 ? "+" : ""}${c.points}`).join(", ");
}

/** The scoring breakdown of one finished game. */
export function scoring(result, legend, names) {
  return el(
    "div",
    // it scrolls sideways on a phone: the keyboard reaches it too
    { class: "scoring", tabindex: 0, role: "region", "aria-label": t("Scoring") },
    el(
      "table",
      {},
      el("thead", {}, el("tr", {}, [t("player"), t("jokers as"), t("plus colours"), t("minus colours"), "+2", t("total")].map((h) => el("th", {}, h)))),
      el(
        "tbody",
        {},
        result.breakdowns.map((b) => {
          const won = result.winners.includes(b.seat);
          const jokers = [
            ...b.named_jokers.map(([, c]) => t("{colour} (named)", { colour: legend[c].name })),
            ...b.joker_colours.map((c) => legend[c].name),
          ];
          return el(
            "tr",
            { class: won ? "winner" : "", dataset: { seat: b.seat } },
            el("td", {}, names[b.seat], won ? ` ★ ${t("winner")}` : ""),
            el("td", {}, jokers.join(", ") || "—"),
            el("td", {}, colourList(b.plus_colours, legend)),
            el("td", {}, colourList(b.minus_colours, legend)),
            el("td", { class: "num" }, b.plus_twos ? `${b.plus_twos} × +2 = ${b.plus_two_points}` : "0"),
            el("td", { class: "num total" }, b.total),
          );
        }),
      ),
    ),
  );
}

export function seatNames(summary) {
  return summary.seats.map((s) => s.name || t("seat {seat} (free)", { seat: s.seat + 1 }));
}

/** Who won, in words: "Ann" or "Ann and Bob" (as the language lists names). */
export function winnersText(winners, names) {
  return list(winners.map((w) => names[w]));
}

/**
 * A log entry (LogEntry: its move, seat, cards, revealed, colour, joker) in words, as the game's
 * MoveEvent.describe tells it in English: "Ann took row 3: red, red, +2". ``legend``: the state's
 * cards, their names translated; ``edition``: the game's (a joker of the playing-cards deck is a
 * wild ace).
 */
export function entryText(entry, names, legend, edition) {
  const who = names[entry.seat];
  const byKind = (kind) => legend.find((c) => c.kind === kind)?.id;
  const lastRound = byKind("last-round");
  const cards = (values) => values.map((c) => legend[c]?.name ?? c).join(", ");
  const colour = entry.colour !== null && entry.colour !== undefined ? legend[entry.colour]?.name ?? entry.colour : "";
  const action = entry.move.split(" ")[0];
  const row = Number(action.slice(1));
  let text;
  if (action === "d") text = t("{who} drew {cards}", { who, cards: cards(entry.cards) });
  else if (/^p\d+$/.test(action)) text = t("{who} put {cards} in row {row}", { who, cards: cards(entry.cards), row });
  else if (/^t\d+$/.test(action)) {
    // a take turns over a card only for the golden joker's bonus (after the last-round card, if it came up)
    const bonus = entry.revealed.filter((c) => c !== lastRound);
    text = bonus.length
      ? t("{who} took row {row}: {cards}; the golden joker brings them {card} from the deck", { who, row, cards: cards(entry.cards), card: cards(bonus) })
      : t("{who} took row {row}: {cards}", { who, row, cards: cards(entry.cards) });
  } else if (action.startsWith("j:")) {
    if (entry.joker === byKind("golden-joker")) text = t("{who} named a golden joker {colour}", { who, colour });
    else if (edition === "playing-cards") text = t("{who} named a wild ace {colour}", { who, colour });
    else text = t("{who} named a joker {colour}", { who, colour });
  } else if (action.startsWith("s:")) text = t("{who} chose {colour} as a starting colour", { who, colour });
  else text = t("{who} passed: nothing to draw and no row to take", { who });
  if (entry.revealed.includes(lastRound)) text = t("The last-round card came up: this is the last round! {move}", { move: text });
  return text;
}
