// A player's page: rating, games and wins, the rating after each rated game (a chart, and the same
// figures in a table for screen readers), the latest results with their rating change and accuracy;
// for another logged-in person, reporting the player and blocking their chat.
import { api, el, rulesText } from "./common.js";
import { playerLink, ratingText, scrollable, signed } from "./site.js";
import { dateTime, lang, num, pct, t } from "./i18n.js";
import { blockPlayer, openReport } from "./report.js";

const main = document.querySelector("main.player-page");
const requested = main.dataset.player;
const user = document.getElementById("account-bar")?.dataset.user || null;

const replayLink = (gameId) => `/games/${encodeURIComponent(gameId)}/replay`;
// everyone starts at openskill's default rating, whose ordinal (mu − 3 sigma) is 0: the chart and
// the table start there, so that the first game's change shows too
const START = 0;
const shortDate = (iso) => new Intl.DateTimeFormat(lang, { dateStyle: "medium" }).format(new Date(iso));

function stat(label, value, id) {
  return el("li", { id }, el("span", { class: "figure" }, value), el("span", { class: "small muted" }, label));
}

function stats(page) {
  return [
    stat(t("rating"), ratingText(page.rating.ordinal), "stat-rating"),
    stat(t("rated games"), num(page.rating.games), "stat-rated"),
    stat(t("games played"), num(page.games), "stat-games"),
    stat(t("wins"), num(page.wins), "stat-wins"),
    stat(t("mean accuracy"), page.accuracy === null ? "—" : pct(page.accuracy / 100), "stat-accuracy"),
  ];
}

function historyTable(history) {
  return el(
    "table",
    { class: "results" },
    el("caption", { class: "small muted" }, t("The rating after each rated game, oldest first")),
    el("thead", {}, el("tr", {}, [t("date"), t("rating"), t("change"), t("game")].map((h, i) => el("th", { scope: "col", class: i === 1 || i === 2 ? "num" : null }, h)))),
    el(
      "tbody",
      {},
      history.map((point, i) => {
        const change = point.rating.ordinal - (i === 0 ? START : history[i - 1].rating.ordinal);
        return el(
          "tr",
          {},
          el("td", {}, dateTime(point.at)),
          el("td", { class: "num" }, ratingText(point.rating.ordinal)),
          el("td", { class: "num" }, signed(change)),
          el("td", {}, point.game ? el("a", { href: replayLink(point.game) }, t("replay")) : t("private table")),
        );
      }),
    ),
  );
}

function historyChart(history) {
  const Chart = window.Chart;
  if (!Chart) return; // the table says the same
  const canvas = document.getElementById("rating-chart");
  new Chart(canvas, {
    type: "line",
    data: {
      labels: [t("start"), ...history.map((point) => shortDate(point.at))],
      datasets: [
        {
          label: t("rating"),
          data: [START, ...history.map((point) => Number(point.rating.ordinal.toFixed(2)))],
          borderColor: "#3a5ba0",
          backgroundColor: "#3a5ba0",
          pointRadius: 3,
          tension: 0,
        },
      ],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      plugins: { legend: { display: false } },
      scales: {
        x: { title: { display: true, text: t("rated game") }, ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 6 } },
        y: { title: { display: true, text: t("rating") }, ticks: { callback: (v) => ratingText(v) } },
      },
    },
  });
}

/** The other seats of a game: people with an account link to their page, bots say their level. */
function opponents(result) {
  return result.opponents.flatMap((o, i) => {
    let name = o.name;
    if (o.kind === "bot") name = t("bot: {name}", { name: o.bot ?? o.name });
    else if (o.deleted) name = t("deleted player");
    else if (o.account) name = playerLink(o.name);
    return i === 0 ? [name] : [", ", name];
  });
}

function resultsTable(page) {
  const head = [t("date"), t("game"), t("opponents"), t("rank"), t("score"), t("rated"), t("rating change"), t("accuracy")];
  const numeric = new Set([3, 4, 6, 7]);
  return el(
    "table",
    { class: "results" },
    el("caption", { class: "visually-hidden" }, t("The latest results of {name}, newest first", { name: page.name })),
    el("thead", {}, el("tr", {}, head.map((h, i) => el("th", { scope: "col", class: numeric.has(i) ? "num" : null }, h)))),
    el(
      "tbody",
      {},
      page.results.map((r) => {
        const players = r.opponents.length + 1;
        const rank = t("{rank} of {players}", { rank: num(r.rank, Number.isInteger(r.rank) ? 0 : 1), players });
        const game = r.game
          ? el("a", { href: replayLink(r.game), "aria-label": t("replay {game}", { game: r.name }) }, r.name)
          : el("span", { class: "muted" }, t("a private table"));
        let accuracy = r.accuracy === null ? "" : pct(r.accuracy / 100);
        if (r.accuracy === null && r.game) {
          accuracy = el("a", { href: `${replayLink(r.game)}#review-panel`, "aria-label": t("review {game}", { game: r.name }) }, t("review"));
        }
        const change = r.rating_change === null ? "" : el("span", { class: `change ${r.rating_change > 0 ? "up" : r.rating_change < 0 ? "down" : ""}` }, signed(r.rating_change));
        return el(
          "tr",
          { dataset: { game: r.game ?? "" } },
          el("td", {}, dateTime(r.date)),
          el(
            "td",
            {},
            game,
            r.won ? [" ", el("span", { class: "pill review-ready" }, t("won"))] : null,
            r.resigned ? [" ", el("span", { class: "pill" }, t("resigned"))] : null,
            el("div", { class: "small muted" }, rulesText(r.rules_summary)),
          ),
          el("td", {}, opponents(r)),
          el("td", { class: "num" }, rank),
          el("td", { class: "num" }, num(r.score)),
          el("td", {}, r.rated ? t("yes") : t("no")),
          el("td", { class: "num rating-change" }, change),
          el("td", { class: "num accuracy" }, accuracy),
        );
      }),
    ),
  );
}

async function mainPage() {
  let page;
  try {
    page = await api(`/api/players/${encodeURIComponent(requested)}?limit=30`);
  } catch (err) {
    const box = document.getElementById("player-error");
    box.textContent = err.message;
    box.hidden = false;
    document.getElementById("player-stats").replaceChildren();
    document.body.dataset.ready = "error";
    return;
  }
  document.getElementById("player-name").textContent = page.name;
  // another person's page: report them, or block their chat (for a logged-in person)
  const others = document.getElementById("player-actions");
  if (others && user !== null && page.name !== user) {
    others.hidden = false;
    document.getElementById("report-player").addEventListener("click", () => openReport({ kind: "player", player: page.name, about: page.name }));
    document.getElementById("block-player").addEventListener("click", () => blockPlayer(page.name));
  }
  document.title = t("Coloretto — {name}", { name: page.name });
  const statBox = document.getElementById("player-stats");
  statBox.replaceChildren(...stats(page));
  statBox.setAttribute("aria-busy", "false");
  if (page.history.length) {
    document.getElementById("history-chart-box").hidden = false;
    document.getElementById("history-details").hidden = false;
    scrollable(document.getElementById("history-table"), t("The rating history as a table"));
    document.getElementById("history-table").replaceChildren(historyTable(page.history));
    historyChart(page.history);
  } else {
    document.getElementById("history-empty").hidden = false;
  }
  if (page.results.length) scrollable(document.getElementById("results"), t("Results"));
  document.getElementById("results").replaceChildren(
    page.results.length
      ? resultsTable(page)
      : el("p", { class: "empty" }, page.name === user ? t("No finished game yet: play one from the lobby!") : t("No finished game yet.")),
  );
  document.body.dataset.ready = "true";
}

mainPage();
