// Helpers of the site's own pages (the leaderboard, a player's page): links to players, a signed
// change of rating, a box that a wide table scrolls in.
import { el } from "./common.js";
import { num } from "./i18n.js";

/** A person's name, linked to their page. */
export function playerLink(name) {
  return el("a", { href: `/players/${encodeURIComponent(name)}` }, name);
}

/** A rating as the pages show it: one decimal, a negative one with a minus sign (−1.5), as its changes. */
export function ratingText(x) {
  const text = num(Math.abs(x), 1);
  return x < 0 && text !== num(0, 1) ? `−${text}` : text;
}

/** +1.2, −0.4, ±0: a change of rating, signed, in the language's way. */
export function signed(x, digits = 1) {
  const rounded = Number(Math.abs(x).toFixed(digits));
  const text = num(rounded, digits);
  if (rounded === 0) return `±${text}`;
  return x > 0 ? `+${text}` : `−${text}`;
}

/** A box a wide table scrolls sideways in (on a phone): the keyboard reaches it, and it is named. */
export function scrollable(box, name) {
  box.tabIndex = 0;
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", name);
}
