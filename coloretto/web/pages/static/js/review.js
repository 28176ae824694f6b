// The game review in the browser: starting it and its progress (the table's end screen and the
// replay viewer), the win-chance graph (Chart.js, vendored: window.Chart), the move list with marks
// and luck, each player's summary. The review's JSON is coloretto.review's Review.to_dict().
import { ApiError, api, el } from "./common.js";
import { num, pct, t, tn } from "./i18n.js";

/** Seat colours of the graph and the summary: not the cards' colours, each with its own dash too. */
export const SEAT_COLOURS = ["#3a5ba0", "#c2185b", "#2e7d32", "#e65100", "#6a1b9a"];
const SEAT_DASHES = [[], [6, 3], [2, 2], [8, 3, 2, 3], [12, 4]];
export const MARK_SIGNS = { inaccuracy: "?!", mistake: "?", blunder: "??" };
const MARK_COLOURS = { inaccuracy: "#b8860b", mistake: "#e65100", blunder: "#b3261e" };
const POLL_MS = 1000;
// while there is no review, the status is read again this often (someone else may start it), for so long
const WATCH_MS = 5000;
const WATCH_FOR_MS = 30 * 60 * 1000;

const reviewPath = (gameId, deal) => `/api/games/${encodeURIComponent(gameId)}/review?game=${deal}`;
export const replayPath = (gameId, deal) => `/games/${encodeURIComponent(gameId)}/replay?game=${deal}`;

function signedNumber(x, digits = 1) {
  const rounded = Number(Math.abs(x).toFixed(digits));
  const text = num(rounded, digits);
  if (rounded === 0) return `±${text}`;
  return x > 0 ? `+${text}` : `−${text}`;
}

/** An action's notation in words ("t2" -> "take row 2"); ``legend`` names the colours of j:/s:. */
export function describeAction(action, legend = []) {
  if (action === "d") return t("draw a card");
  if (action === "x") return t("pass");
  const row = /^([pt])(\d+)$/.exec(action);
  if (row) return row[1] === "p" ? t("place it in row {row}", { row: Number(row[2]) }) : t("take row {row}", { row: Number(row[2]) });
  const info = legend.find((c) => c.token === action.slice(2));
  const colour = info ? info.name : action.slice(2);
  if (action.startsWith("s:")) return t("choose {colour} as a starting colour", { colour });
  if (action.startsWith("j:")) return t("name the joker {colour}", { colour });
  return action;
}

/** The row (1-based) an action acts on, from its notation, else the review's 0-based ``best_row``. */
export function actionRow(action, bestRow = null) {
  const row = /^[pt](\d+)$/.exec(action || "");
  if (row) return Number(row[1]);
  return bestRow === null || bestRow === undefined ? null : bestRow + 1;
}

// ------------------------------------------------------------------ starting it, its progress

/**
 * A widget that offers the review of one game and follows it: "Review this game" while there is none,
 * a progress bar while it runs (polled every second), then ``onDone(review)`` and a link to the replay.
 * It reads the status on creation, so every seat and spectator sees a review that exists. Returns
 * ``{node, stop()}``; the node keeps its state, so a page that redraws may append it again.
 */
export function reviewWidget(gameId, deal, { label = t("Review this game"), link = true, onDone = null, watch = true } = {}) {
  const node = el("div", { class: "review-widget", dataset: { deal, reviewStatus: "loading" } });
  let timer = null;
  let stopped = false;
  let finished = false;
  const opened = performance.now();

  const setStatus = (status) => { node.dataset.reviewStatus = status; };
  const schedule = (fn, ms) => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(fn, ms);
  };

  let shown = null; // what the button says now: a status read again is not drawn again (the focus stays)

  function showButton(note = "") {
    setStatus("none");
    if (shown === note && node.querySelector("button.review-start:not(:disabled)")) return;
    shown = note;
    const button = el("button", { type: "button", class: "review-start", onclick: start }, label);
    node.replaceChildren(button, ...(note ? [el("span", { class: "small muted review-note", role: "status" }, " ", note)] : []));
  }

  function showProgress(done, total) {
    setStatus("running");
    shown = null;
    const text = total > 0
      ? tn("Reviewing… {done} of {n} analysis ({share})", "Reviewing… {done} of {n} analyses ({share})", total, { done, share: pct(done / total) })
      : t("Reviewing… waiting for a worker");
    const bar = node.querySelector(".review-progress");
    if (bar) { // updated in place: the bar keeps its focus and a screen reader is not told it anew
      bar.max = Math.max(1, total);
      bar.value = done;
      node.querySelector(".review-progress-text").textContent = ` ${text}`;
      return;
    }
    node.replaceChildren(
      el(
        "div",
        { class: "review-running" },
        el("progress", { class: "review-progress", max: Math.max(1, total), value: done, "aria-label": t("review progress") }),
        el("span", { class: "small review-progress-text" }, ` ${text}`),
      ),
    );
  }

  function showDone(review) {
    setStatus("done");
    shown = null;
    const parts = [el("span", { class: "pill review-ready" }, t("Review ready"))];
    if (link) parts.push(" ", el("a", { class: "button review-open", href: replayPath(gameId, deal) }, t("Open the review")));
    node.replaceChildren(...parts);
    if (!finished) {
      finished = true;
      if (onDone) onDone(review);
    }
  }

  function showFailed(error) {
    setStatus("failed");
    // a stored error of the server's own is a msgid (reviews.py): shown in the page's language
    showButton(error ? t("The review failed: {error}. Try again?", { error: t(error) }) : t("The review failed. Try again?"));
    setStatus("failed");
  }

  function render(status) {
    if (status.status === "done" && status.review) showDone(status.review);
    else if (status.status === "running") {
      showProgress(status.done ?? 0, status.total ?? 0);
      schedule(poll, POLL_MS);
    } else {
      if (status.status === "failed") showFailed(status.error);
      else showButton();
      // someone else (another seat, a spectator) may start it: look now and then, for a while
      if (watch && performance.now() - opened < WATCH_FOR_MS) schedule(poll, WATCH_MS);
    }
  }

  async function poll() {
    try {
      render(await api(reviewPath(gameId, deal)));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && err.code !== "not_found") return showButton();
      // a passing network error: look again a little later
      node.dataset.error = err.message;
      schedule(poll, 3 * POLL_MS);
    }
  }

  async function start() {
    clearTimeout(timer);
    for (const b of node.querySelectorAll("button")) b.disabled = true;
    try {
      render(await api(reviewPath(gameId, deal), { method: "POST" }));
    } catch (err) {
      if (err instanceof ApiError && err.code === "busy") {
        showButton(t("The server is busy reviewing other games: trying again in a few seconds…"));
        for (const b of node.querySelectorAll("button")) b.disabled = true;
        schedule(start, 5000);
      } else {
        showButton(err.message);
      }
    }
  }

  node.replaceChildren(el("span", { class: "small muted" }, t("looking for a review…")));
  poll();
  // refresh(): read the status again now (the table is told over its WebSocket when a review ends)
  const refresh = () => {
    clearTimeout(timer);
    if (!stopped && !finished) poll();
  };
  return { node, stop: () => { stopped = true; clearTimeout(timer); }, start, refresh };
}

// ------------------------------------------------------------------ each player's summary

/** The summary table: accuracy, marks, skill loss, luck, luck-adjusted result, beside the final score. */
export function summaryTable(review, names) {
  const head = [t("player"), t("score"), t("accuracy"), "?! / ? / ??", t("lost to mistakes"), t("luck"), t("result"), t("luck-adjusted")];
  return el(
    "div",
    // it scrolls sideways on a phone: the keyboard reaches it too
    { class: "review-summary", tabindex: 0, role: "region", "aria-label": t("Players' review") },
    el(
      "table",
      {},
      el("caption", { class: "small muted" }, t("Each player's review: accuracy from the win chance each move gave away; luck is what the cards that came did to the win chance, against the average card.")),
      el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))),
      el(
        "tbody",
        {},
        review.summary.map((s) =>
          el(
            "tr",
            { dataset: { seat: s.seat } },
            el("th", { scope: "row" }, el("span", { class: "seat-swatch", style: { background: SEAT_COLOURS[s.seat % SEAT_COLOURS.length] }, "aria-hidden": "true" }), " ", names[s.seat] ?? s.name),
            el("td", { class: "num" }, s.final_score),
            el("td", { class: "num accuracy" }, s.decisions ? pct(s.accuracy / 100, { digits: 1 }) : "—"),
            el(
              "td",
              {
                class: "num marks",
                title: [
                  tn("{n} inaccuracy", "{n} inaccuracies", s.inaccuracies),
                  tn("{n} mistake", "{n} mistakes", s.mistakes),
                  tn("{n} blunder", "{n} blunders", s.blunders),
                ].join(", "),
              },
              `${s.inaccuracies} / ${s.mistakes} / ${s.blunders}`,
            ),
            el("td", { class: "num" }, `${pct(s.win_loss)} · ${points(num(s.score_loss, 1))}`),
            el(
              "td",
              { class: `num luck ${luckClass(s.luck_win)}`, title: s.luck_win_se !== undefined ? t("± {error} (2 standard errors)", { error: pct(2 * s.luck_win_se) }) : null },
              `${pct(s.luck_win, { signed: true })} · ${points(signedNumber(s.luck_score))}`,
            ),
            el("td", { class: "num" }, resultText(s.result)),
            el("td", { class: "num adjusted" }, `${num(s.luck_adjusted_result, 2)} · ${points(num(s.luck_adjusted_score, 1))}`),
          ),
        ),
      ),
    ),
    el("p", { class: "small muted" }, t("Result: 1 a win, a share of 1 for a shared win, 0 a loss. Luck-adjusted: the result and the score with each player's luck taken away.")),
  );
}

/** Points with decimals (already written as text): "7.5 pts". */
function points(text) {
  return t("{points} pts", { points: text });
}

function resultText(result) {
  if (result >= 1) return t("1 (won)");
  if (result <= 0) return "0";
  return num(result, 2);
}

export function luckClass(x) {
  if (Math.round(x * 100) === 0) return "";
  return x > 0 ? "good" : "bad";
}

// ------------------------------------------------------------------ the move list

/** The moves with their marks and luck: a button per move (``onPick(positionIndex)``, the position before
 * the move, where its decision was taken); this list is the text alternative of the graph. */
export function moveList(review, frames, names, legend, onPick, describe = (entry) => entry.text) {
  return el(
    "ol",
    { class: "review-moves", id: "move-list" },
    review.moves.map((m, k) => {
      const frame = frames[k + 1];
      const text = frame?.entry ? describe(frame.entry) : `${names[m.seat]}: ${m.played}`;
      const d = m.decision;
      const mark = d && d.mark ? d.mark : "";
      const after = review.positions[k + 1];
      const luck = m.luck;
      const seatWin = after && after.win ? after.win[m.seat] : null;
      const luckNode = luck
        ? el(
          "span",
          {
            class: `luck ${luckClass(luck.win[m.seat])}`,
            title: luck.kind === "bonus" ? t("luck of the bonus card for {name}", { name: names[m.seat] }) : t("luck of the card drawn for {name}", { name: names[m.seat] }),
          },
          t("luck {change}", { change: pct(luck.win[m.seat], { signed: true }) }),
        )
        : null;
      const parts = [
        el("span", { class: "move-no" }, `${m.number}.`),
        " ",
        el("span", { class: "move-text" }, text),
        mark ? el("span", { class: `mark ${mark}`, title: markName(mark) }, ` ${MARK_SIGNS[mark]}`) : null,
        d && mark ? el("span", { class: "loss small" }, ` ${t("{loss}, best: {move}", { loss: lossText(d), move: d.best })}`) : null,
        luckNode ? " " : null,
        luckNode,
        seatWin !== null ? el("span", { class: "small muted win-after" }, ` · ${names[m.seat]} ${pct(seatWin)}`) : null,
      ];
      let label = t("move {number}: {move}", { number: m.number, move: text });
      if (mark) label += `, ${markName(mark)} (${MARK_SIGNS[mark]}), ${lossText(d)}, ${t("best {move}", { move: describeAction(d.best, legend) })}`;
      if (luck) label += `, ${t("luck {change}", { change: pct(luck.win[m.seat], { signed: true }) })}`;
      return el(
        "li",
        { value: m.number, dataset: { move: k + 1, mark, seat: m.seat } },
        el("button", { type: "button", class: "move-button", dataset: { index: k, mark }, "aria-label": label, onclick: () => onPick(k) }, parts),
      );
    }),
  );
}

/** What a decision gave away: "−32%", "−7.5 pts" or both (a mark is on either). */
function lossText(d) {
  const parts = [];
  if (d.win_loss > 0) parts.push(pct(-d.win_loss, { signed: true }));
  if (d.score_loss > 0) parts.push(points(signedNumber(-d.score_loss)));
  return parts.join(" · ") || pct(0, { signed: true });
}

/** A mark's name: "inaccuracy", "mistake", "blunder". */
export function markName(mark) {
  return { inaccuracy: t("inaccuracy"), mistake: t("mistake"), blunder: t("blunder") }[mark] ?? mark;
}

// ------------------------------------------------------------------ the graph

/**
 * The win-chance graph: one line per seat over every position (x = the replay's frame index), the
 * marked moves drawn on the mover's line with their sign, the shown position as a vertical line;
 * a click picks the nearest position (``onPick(index)``). Returns ``{chart, setIndex(i)}``.
 */
export function winChart(canvas, review, names, onPick) {
  const Chart = window.Chart;
  if (!Chart) throw new Error(t("the chart library did not load"));
  let current = 0;
  const marks = [];
  review.moves.forEach((m, k) => {
    if (m.decision && m.decision.mark && review.positions[k + 1]) {
      marks.push({ x: k + 1, y: 100 * review.positions[k + 1].win[m.seat], seat: m.seat, mark: m.decision.mark });
    }
  });
  const overlay = {
    id: "reviewOverlay",
    afterDatasetsDraw(chart) {
      const { ctx, chartArea, scales } = chart;
      ctx.save();
      const x = scales.x.getPixelForValue(current);
      ctx.strokeStyle = "#0009";
      ctx.lineWidth = 1.5;
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      ctx.moveTo(x, chartArea.top);
      ctx.lineTo(x, chartArea.bottom);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.font = "bold 12px system-ui, sans-serif";
      ctx.textAlign = "center";
      for (const m of marks) {
        const px = scales.x.getPixelForValue(m.x);
        const py = scales.y.getPixelForValue(m.y);
        ctx.fillStyle = MARK_COLOURS[m.mark];
        ctx.beginPath();
        ctx.arc(px, py, m.mark === "blunder" ? 5 : 4, 0, 2 * Math.PI);
        ctx.fill();
        ctx.fillText(MARK_SIGNS[m.mark], px, py < chartArea.top + 16 ? py + 17 : py - 8);
      }
      ctx.restore();
    },
  };
  const datasets = review.seats.map((_, seat) => ({
    label: names[seat] ?? review.seats[seat],
    data: review.positions.map((p) => ({ x: p.index, y: 100 * p.win[seat] })),
    borderColor: SEAT_COLOURS[seat % SEAT_COLOURS.length],
    backgroundColor: SEAT_COLOURS[seat % SEAT_COLOURS.length],
    borderDash: SEAT_DASHES[seat % SEAT_DASHES.length],
    borderWidth: 2,
    pointRadius: 0,
    pointHitRadius: 6,
    tension: 0,
  }));
  const chart = new Chart(canvas, {
    type: "line",
    data: { datasets },
    plugins: [overlay],
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      parsing: false,
      interaction: { mode: "index", intersect: false, axis: "x" },
      scales: {
        x: { type: "linear", min: 0, max: review.positions.length - 1, title: { display: true, text: t("position (move number)") }, ticks: { precision: 0 } },
        y: { min: 0, max: 100, title: { display: true, text: t("win chance (%)") }, ticks: { callback: (v) => pct(v / 100) } },
      },
      plugins: {
        legend: { position: "bottom", labels: { boxWidth: 18, boxHeight: 3 } },
        tooltip: {
          callbacks: {
            title: (items) => (items.length ? t("position {number}", { number: items[0].parsed.x }) : ""),
            label: (item) => `${item.dataset.label}: ${pct(item.parsed.y / 100)}`,
          },
        },
      },
    },
  });
  // the canvas's own click (Chart.js hands events on at the next animation frame): the nearest position
  canvas.addEventListener("click", (event) => {
    const rect = canvas.getBoundingClientRect();
    const value = chart.scales.x.getValueForPixel(event.clientX - rect.left);
    if (Number.isFinite(value)) onPick(Math.max(0, Math.min(review.positions.length - 1, Math.round(value))));
  });
  return {
    chart,
    setIndex(i) {
      current = i;
      chart.draw();
    },
  };
}

// ------------------------------------------------------------------ a decision's lines

/** The lines of a decision (or of a what-if position): move, win chance, expected points; the best first. */
export function linesTable(lines, legend, { played = null, best = null, onTry = null, caption = null } = {}) {
  return el("div", { class: "lines-box", tabindex: 0, role: "region", "aria-label": t("the moves' analysis") }, el(
    "table",
    { class: "review-lines" },
    caption ? el("caption", { class: "small muted" }, caption) : null,
    el("thead", {}, el("tr", {}, [t("move"), t("win chance"), t("expected points"), t("simulations")].map((h) => el("th", { scope: "col" }, h)))),
    el(
      "tbody",
      {},
      lines.map((line) => {
        const tags = [];
        if (line.action === best) tags.push(el("span", { class: "pill best-pill" }, t("best")));
        if (line.action === played) tags.push(el("span", { class: "pill played-pill" }, t("played")));
        const name = `${line.action} · ${describeAction(line.action, legend)}`;
        return el(
          "tr",
          { dataset: { action: line.action } },
          el("td", {}, onTry ? el("button", { type: "button", class: "linkish", onclick: () => onTry(line.action), "aria-label": t("try {move}", { move: describeAction(line.action, legend) }) }, name) : name, " ", tags),
          el("td", { class: "num" }, pct(line.win)),
          el("td", { class: "num" }, num(line.score, 1)),
          el("td", { class: "num small muted" }, line.simulations),
        );
      }),
    ),
  ));
}

/** Every seat's win chance (and expected points) as a small list. */
export function seatChances(win, score, names) {
  return el(
    "ul",
    { class: "seat-chances" },
    win.map((w, seat) =>
      el(
        "li",
        { dataset: { seat } },
        el("span", { class: "seat-swatch", style: { background: SEAT_COLOURS[seat % SEAT_COLOURS.length] }, "aria-hidden": "true" }),
        ` ${names[seat]}: ${pct(w)}`,
        score ? el("span", { class: "small muted" }, ` · ${points(num(score[seat], 1))}`) : null,
      ),
    ),
  );
}
