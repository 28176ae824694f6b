// The leaderboard: people and the bots' difficulty levels by rating (openskill's ordinal), with
// links to the people's pages.
import { api, el } from "./common.js";
import { playerLink, ratingText, scrollable } from "./site.js";
import { num, t, tn } from "./i18n.js";

const user = document.getElementById("account-bar")?.dataset.user || null;

function entryName(entry) {
  if (entry.kind === "bot") {
    return [t("bot: {name}", { name: entry.name }), " ", el("span", { class: "pill bot" }, t("bot"))];
  }
  return playerLink(entry.name);
}

function board(entries) {
  const head = [t("rank"), t("player"), t("rating"), t("rated games")];
  return el(
    "table",
    { class: "ranking" },
    el("caption", { class: "visually-hidden" }, t("Players and bot levels by rating, best first")),
    el("thead", {}, el("tr", {}, head.map((h, i) => el("th", { scope: "col", class: i === 1 ? null : "num" }, h)))),
    el(
      "tbody",
      {},
      entries.map((entry) =>
        el(
          "tr",
          { class: entry.kind === "person" && entry.name === user ? "me" : null, dataset: { kind: entry.kind, name: entry.name } },
          el("td", { class: "num" }, num(entry.rank)),
          el("th", { scope: "row" }, entryName(entry)),
          el("td", { class: "num rating", title: t("mu {mu}, sigma {sigma}", { mu: num(entry.rating.mu, 2), sigma: num(entry.rating.sigma, 2) }) }, ratingText(entry.rating.ordinal)),
          el("td", { class: "num" }, num(entry.rating.games)),
        ),
      ),
    ),
  );
}

async function main() {
  const box = document.getElementById("leaderboard");
  try {
    const data = await api("/api/leaderboard?limit=100");
    document.getElementById("min-games").textContent = tn(
      "A person is listed after {n} rated game.",
      "A person is listed after {n} rated games.",
      data.min_games,
    );
    if (data.players.length) scrollable(box, t("Players and bot levels by rating, best first"));
    box.replaceChildren(data.players.length ? board(data.players) : el("p", { class: "empty" }, t("Nobody is rated yet.")));
  } catch (err) {
    box.replaceChildren(el("p", { class: "form-error", role: "alert" }, err.message));
  }
  box.setAttribute("aria-busy", "false");
  document.body.dataset.ready = "true";
}

main();
