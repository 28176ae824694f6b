// Rendering shared by the table and the replay viewer: cards, rows, players, scoring.
import { el, timeLeft } from "./common.js";

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
      const label = row.taken ? "taken" : action ? (action.startsWith("p") ? "place here" : "take") : "";
      const node = el(
        "div",
        {
          class: `row ${row.taken ? "taken" : ""} ${kind}`,
          dataset: { row: i + 1, action: action || "" },
          role: action ? "button" : null,
          tabindex: action ? 0 : null,
          "aria-label": `row ${i + 1}, ${row.cards.length} of ${row.capacity} cards${label ? ", " + label : ""}`,
          onclick: action && onAct ? () => onAct(action) : null,
          onkeydown: action && onAct ? (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onAct(action); } } : null,
        },
        el("span", { class: "label" }, `Row ${i + 1}`, el("br"), el("span", { class: "small" }, `${row.cards.length}/${row.capacity}${row.taken ? " · taken" : ""}`)),
        el("span", { class: "cards" }, row.cards.map((c) => card(c, legend)), slots),
        hint && hint === action ? el("span", { class: "pill warn hint-tag" }, "hint") : null,
        action ? el("span", { class: "hint-tag muted" }, action.startsWith("p") ? `place: ${i + 1}` : `take: ${i + 1}`) : null,
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
  return el("div", { class: "collection" }, chips.length ? chips : el("span", { class: "muted small" }, "no cards"));
}

/** A clock pill that the table ticks down (see table.js): while it runs ``endsAt`` is when it runs out,
 * on performance.now()'s scale; a stopped one shows ``seconds``. Red under 10 s. */
export function clockPill(kind, seconds, endsAt = null, { prefix = "", suffix = "", title = "" } = {}) {
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
        ? el("div", { class: "small muted" }, "named jokers: ", p.named_jokers.map(([, c]) => legend[c].name).join(", "))
        : null;
      const turnClock = clock && clock.turn && p.seat === clock.toMove
        ? clockPill("countdown", clock.turn.seconds, clock.turn.endsAt, { suffix: " left", title: "time left for this move" })
        : null;
      const bank = clock && clock.banks && clock.banks[p.seat]
        ? clockPill("bank", clock.banks[p.seat].seconds, clock.banks[p.seat].endsAt, { prefix: "bank ", title: "time left for all of this seat's moves" })
        : null;
      return el(
        "section",
        { class: `player ${p.seat === toMove ? "to-move" : ""} ${p.seat === you ? "me" : ""} ${away.includes(p.seat) ? "away" : ""}`, dataset: { seat: p.seat } },
        el(
          "header",
          {},
          el("span", { class: "name" }, names[p.seat]),
          p.seat === you ? el("span", { class: "pill" }, "you") : null,
          p.seat === toMove ? el("span", { class: "pill turn-pill" }, "to move") : null,
          turnClock,
          thinkingSlots ? el("span", { class: "thinking", "aria-live": "polite", dataset: { seat: p.seat } }) : null,
          p.out ? el("span", { class: "pill out" }, "out this round") : null,
          online.includes(p.seat) ? el("span", { class: "pill online" }, "online") : null,
          bank,
          el("span", { class: "score", title: "best score right now" }, `${p.score} pts`),
        ),
        away.includes(p.seat) ? el("div", { class: "away-note small" }, `a bot plays for ${names[p.seat]}`) : null,
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
    { class: "scoring" },
    el(
      "table",
      {},
      el("thead", {}, el("tr", {}, ["player", "jokers as", "plus colours", "minus colours", "+2", "total"].map((h) => el("th", {}, h)))),
      el(
        "tbody",
        {},
        result.breakdowns.map((b) => {
          const won = result.winners.includes(b.seat);
          const jokers = [
            ...b.named_jokers.map(([, c]) => `${legend[c].name} (named)`),
            ...b.joker_colours.map((c) => legend[c].name),
          ];
          return el(
            "tr",
            { class: won ? "winner" : "", dataset: { seat: b.seat } },
            el("td", {}, names[b.seat], won ? " ★ winner" : ""),
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
  return summary.seats.map((s) => s.name || `seat ${s.seat + 1} (free)`);
}
