// Rendering shared by the table and the replay viewer: cards, rows, players, scoring, the moves.
import { el, timeLeft } from "./common.js";
import { list, t, tn } from "./i18n.js";

/** What a screen reader says for a card: "red card", "joker", "+2". */
export function cardLabel(info) {
  return info.kind === "colour" ? t("{colour} card", { colour: info.name }) : info.name;
}

/** One card: colour, symbol and letter (in two corners, as a printed card's index), so that no one
 * needs to tell colours apart. It is one image to a screen reader, named by ``cardLabel``. */
export function card(id, legend, { mini = false, count = null, decorative = false } = {}) {
  const info = legend[id];
  const cls = info.kind === "colour" ? `c${id}` : info.kind;
  const lettered = info.kind === "colour" || info.kind === "joker";
  return el(
    "span",
    {
      class: `card ${cls}${mini ? " mini" : ""}`,
      role: decorative ? null : "img",
      title: info.name,
      "aria-label": decorative ? null : count !== null ? `${cardLabel(info)} × ${count}` : cardLabel(info),
      "aria-hidden": decorative ? "true" : null,
      dataset: { card: info.token },
    },
    lettered ? el("span", { class: "tok", "aria-hidden": "true" }, info.token) : null,
    el("span", { class: "sym", "aria-hidden": "true" }, info.symbol),
    lettered && !mini ? el("span", { class: "tok tok-end", "aria-hidden": "true" }, info.token) : null,
    count !== null ? el("span", { class: "count", "aria-hidden": "true" }, count) : null,
  );
}

/** A list of cards in words: "red, red, joker" (or "empty"). */
export function cardNames(cards, legend) {
  return cards.length ? cards.map((c) => legend[c].name).join(", ") : t("empty");
}

/** What a screen reader says for a row: "Row 2: red, red, joker; 1 place left". */
export function rowLabel(row, i, legend) {
  if (row.taken) return t("Row {row}: taken this round", { row: i + 1 });
  const left = row.capacity - row.cards.length;
  const places = left > 0 ? tn("{n} place left", "{n} places left", left) : t("full");
  return t("Row {row}: {cards}; {places}", { row: i + 1, cards: cardNames(row.cards, legend), places });
}

/** The rows of the table, each a row of cards after its row card; ``actionFor(i)`` gives the action
 * of a click on row i, or null; ``hint`` the action the hint suggests (that row is outlined). An
 * actionable row is a button (Enter or Space), the others a labelled group. */
export function rows(state, legend, actionFor = () => null, onAct = null, hint = null) {
  return el(
    "div",
    { class: "rows" },
    state.rows.map((row, i) => {
      const action = actionFor(i);
      const slots = [];
      for (let k = row.cards.length; k < row.capacity; k++) slots.push(el("span", { class: "slot" }));
      const kind = action ? (action.startsWith("p") ? "can-place" : "can-take") : "";
      const hinted = hint !== null && (hint === `p${i + 1}` || hint === `t${i + 1}`);
      const does = action ? (action.startsWith("p") ? t("place the card here ({key})", { key: i + 1 }) : t("take this row ({key})", { key: i + 1 })) : "";
      const label = [rowLabel(row, i, legend), does, hinted ? t("the hint's move") : ""].filter(Boolean).join(". ");
      return el(
        "div",
        {
          class: `row${row.taken ? " taken" : ""}${kind ? ` ${kind}` : ""}${hinted ? " hinted" : ""}`,
          dataset: { row: i + 1, action: action || "" },
          role: action ? "button" : "group",
          tabindex: action ? 0 : null,
          "aria-label": label,
          onclick: action && onAct ? () => onAct(action) : null,
          onkeydown: action && onAct ? (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onAct(action); } } : null,
        },
        el(
          "span",
          { class: "row-card", "aria-hidden": "true" },
          el("span", { class: "row-name" }, t("Row {row}", { row: i + 1 })),
          el("span", { class: "row-fill" }, `${row.cards.length}/${row.capacity}`),
        ),
        el("span", { class: "cards", "aria-hidden": "true" }, row.cards.map((c) => card(c, legend)), slots),
        row.taken ? el("span", { class: "row-tag taken-tag", "aria-hidden": "true" }, t("taken")) : null,
        hinted ? el("span", { class: "pill warn hint-tag", "aria-hidden": "true" }, t("hint")) : null,
        action ? el("span", { class: "row-tag action-tag", "aria-hidden": "true" }, action.startsWith("p") ? t("place: {row}", { row: i + 1 }) : t("take: {row}", { row: i + 1 })) : null,
      );
    }),
  );
}

/** How many cards of one kind a fan shows at most: the count says the rest. */
const FAN_MOST = 6;

/** A collection fanned by colour: the cards of each kind held overlap as in a hand, the top one
 * whole with the count; each fan is one image to a screen reader ("red: 3 cards"). */
export function collection(counts, legend, colours) {
  const fans = [];
  counts.forEach((n, kind) => {
    if (n <= 0 || !(kind >= 7 || kind < colours)) return;
    const info = legend[kind];
    const under = [];
    const cls = info.kind === "colour" ? `c${kind}` : info.kind;
    const letter = el("span", { class: "tok" }, info.kind === "colour" || info.kind === "joker" ? info.token : info.symbol);
    for (let k = 1; k < Math.min(n, FAN_MOST); k++) under.push(el("span", { class: `card mini fanned ${cls}`, "aria-hidden": "true" }, letter.cloneNode(true)));
    fans.push(
      el(
        "span",
        { class: "fan", role: "img", "aria-label": tn("{kind}: {n} card", "{kind}: {n} cards", n, { kind: info.name }), dataset: { kind, count: n } },
        under,
        card(kind, legend, { mini: true, count: n, decorative: true }),
      ),
    );
  });
  return el("div", { class: "collection" }, fans.length ? fans : el("span", { class: "muted small" }, t("no cards")));
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
 * The players' panels, one a seat. ``away``: seats a bot plays for now; ``resigned``: seats whose
 * person resigned (a bot finishes for them); ``clock``: {toMove, turn: {seconds, endsAt} | null,
 * banks: [{seconds, endsAt} | null (no bank shown)] | null}; ``thinkingSlots``: each panel gets a
 * polite live region that the table fills with "thinking…" while that seat's bot thinks (it exists
 * before it is filled, so that screen readers announce it). Each panel is named for a screen reader
 * by its seat's name, score and state ("Ann, 12 points, to move").
 */
export function players(state, legend, names, { you = null, toMove = null, online = [], away = [], resigned = [], clock = null, thinkingSlots = false } = {}) {
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
      const gaveUp = resigned.includes(p.seat);
      const botPlays = away.includes(p.seat);
      const score = tn("{n} point", "{n} points", p.score);
      const note = gaveUp
        ? t("resigned: a bot finishes the game for {name}", { name: names[p.seat] })
        : botPlays ? t("a bot plays for {name}", { name: names[p.seat] }) : "";
      const label = [
        names[p.seat],
        score,
        p.seat === you ? t("your seat") : "",
        p.seat === toMove ? t("to move") : "",
        p.out ? t("out this round") : "",
        note,
      ].filter(Boolean).join(", ");
      return el(
        "section",
        {
          class: `player${p.seat === toMove ? " to-move" : ""}${p.seat === you ? " me" : ""}${botPlays || gaveUp ? " away" : ""}${gaveUp ? " resigned" : ""}`,
          dataset: { seat: p.seat },
          "aria-label": label,
        },
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
          el("span", { class: "score", title: t("best score right now") }, score),
        ),
        note ? el("div", { class: `away-note small${gaveUp ? " resigned-note" : ""}` }, note) : null,
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

/** The scoring breakdown of one finished game: a table, which a narrow screen shows as one block
 * per player (each cell says its column, ``data-label``; the roles keep it a table to a screen
 * reader once its CSS display is no longer a table's). */
export function scoring(result, legend, names) {
  const heads = [t("player"), t("jokers as"), t("plus colours"), t("minus colours"), "+2", t("total")];
  const cell = (column, content, cls = "") => el("td", { role: "cell", class: cls || null, dataset: { label: heads[column] } }, content);
  return el(
    "div",
    // it scrolls sideways on a phone: the keyboard reaches it too
    { class: "scoring", tabindex: 0, role: "region", "aria-label": t("Scoring") },
    el(
      "table",
      { role: "table" },
      el("thead", { role: "rowgroup" }, el("tr", { role: "row" }, heads.map((h) => el("th", { role: "columnheader", scope: "col" }, h)))),
      el(
        "tbody",
        { role: "rowgroup" },
        result.breakdowns.map((b) => {
          const won = result.winners.includes(b.seat);
          const jokers = [
            ...b.named_jokers.map(([, c]) => t("{colour} (named)", { colour: legend[c].name })),
            ...b.joker_colours.map((c) => legend[c].name),
          ];
          return el(
            "tr",
            { role: "row", class: won ? "winner" : "", dataset: { seat: b.seat } },
            cell(0, [names[b.seat], won ? ` ★ ${t("winner")}` : ""], "who"),
            cell(1, jokers.join(", ") || "—"),
            cell(2, colourList(b.plus_colours, legend)),
            cell(3, colourList(b.minus_colours, legend)),
            cell(4, b.plus_twos ? `${b.plus_twos} × +2 = ${b.plus_two_points}` : "0", "num"),
            cell(5, b.total, "num total"),
          );
        }),
      ),
    ),
  );
}

export function seatNames(summary) {
  return summary.seats.map(seatName);
}

/** A seat's name in the page's language: a person's own, a bot's seat number and bot ("Bot 2
 * (medium)": the server's label is English), a deleted account's label, or the free seat's number. */
export function seatName(s) {
  if (s.kind === "bot" && s.bot) return t("Bot {seat} ({bot})", { seat: s.seat + 1, bot: s.bot });
  if (s.deleted) return t("deleted player");
  return s.name || t("seat {seat} (free)", { seat: s.seat + 1 });
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
