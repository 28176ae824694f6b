// The cards move as on a table: a card drawn slides from the deck to the drawn card's place, a card
// placed from there into its row, a row taken slides to its taker's collection (and, with two
// players, the row nobody took to the cards out of the game). Only between two states one move
// apart (a state sent again, or a jump after a reconnection, is drawn as it is); short; never in the
// way (the page is drawn at once and takes clicks and keys while the cards move: a card that flies
// is a copy over the page that no pointer can hit); and not at all when the person asked their
// system for less motion, or when the tab is not being looked at.

/** Milliseconds a card takes to move. */
export const DURATION = 260;
const EASING = "cubic-bezier(.2, .7, .3, 1)";

const reduced = window.matchMedia ? window.matchMedia("(prefers-reduced-motion: reduce)") : null;

/** Whether the cards may move now. */
export function motionAllowed() {
  return !(reduced && reduced.matches) && !document.hidden && typeof Element.prototype.animate === "function";
}

function rectOf(node) {
  if (!node) return null;
  const r = node.getBoundingClientRect();
  return r.width && r.height ? r : null;
}

/** Where the deck, the drawn card and each row's cards are on the page now, before a new state is
 * drawn over them; each row's cards are copied, for the copies that fly once they are gone. */
export function capture() {
  return {
    deck: rectOf(document.getElementById("deck")),
    pending: rectOf(document.querySelector("#pending .card")),
    rows: [...document.querySelectorAll("#rows .row")].map((row) =>
      [...row.querySelectorAll(".cards .card")].map((node) => ({ rect: rectOf(node), node: node.cloneNode(true) })),
    ),
  };
}

/** ``node`` is in its new place: it starts where ``from`` was and slides there, marked ``cls``
 * meanwhile. */
function slideIn(node, from, cls) {
  const to = rectOf(node);
  if (!to || !from) return;
  const dx = from.left + from.width / 2 - (to.left + to.width / 2);
  const dy = from.top + from.height / 2 - (to.top + to.height / 2);
  const scale = Math.max(0.5, Math.min(2, from.width / to.width));
  node.classList.add(cls);
  const motion = node.animate(
    [{ transform: `translate(${dx}px, ${dy}px) scale(${scale})` }, { transform: "none" }],
    { duration: DURATION, easing: EASING },
  );
  motion.finished.catch(() => {}).finally(() => node.classList.remove(cls));
}

/** Copies of cards that were at ``cards`` (their rects and nodes) fly to ``target`` and vanish;
 * ``cls`` marks the copies and, while they fly, the target. */
function fly(cards, target, cls) {
  const to = rectOf(target);
  if (!to || !cards.length) return;
  target.classList.add(cls);
  const flights = cards.filter((c) => c.rect).map(({ rect, node }, k) => {
    const ghost = node.cloneNode(true);
    ghost.classList.remove("anim-draw", "anim-place"); // copied while it still slid in: it flies now
    ghost.classList.add("ghost", cls);
    ghost.setAttribute("aria-hidden", "true");
    ghost.removeAttribute("role");
    ghost.removeAttribute("aria-label");
    Object.assign(ghost.style, { left: `${rect.left}px`, top: `${rect.top}px`, width: `${rect.width}px`, height: `${rect.height}px` });
    document.body.append(ghost);
    const dx = to.left + Math.min(to.width / 2, 24 + k * 12) - (rect.left + rect.width / 2);
    const dy = to.top + to.height / 2 - (rect.top + rect.height / 2);
    const motion = ghost.animate(
      [{ transform: "none", opacity: 1 }, { transform: `translate(${dx}px, ${dy}px) scale(.6)`, opacity: 0.2 }],
      { duration: DURATION, easing: EASING, delay: k * 25, fill: "forwards" },
    );
    return motion.finished.catch(() => {}).finally(() => ghost.remove());
  });
  Promise.all(flights).finally(() => target.classList.remove(cls));
}

/**
 * Moves the cards of one move (``entry``, the log entry of the state just drawn) from where they were
 * (``before``, from ``capture()``). ``removedRow``: with two players, the index of the row that left
 * the game as this move ended the round, or null.
 */
export function animateMove(entry, before, removedRow = null) {
  const action = entry.move.split(" ")[0];
  if (action === "d") {
    slideIn(document.querySelector("#pending .card"), before.deck, "anim-draw");
  } else if (/^p\d+$/.test(action)) {
    const cards = document.querySelectorAll(`#rows .row[data-row="${action.slice(1)}"] .cards .card`);
    slideIn(cards[cards.length - 1], before.pending ?? before.deck, "anim-place");
  } else if (/^t\d+$/.test(action)) {
    const row = Number(action.slice(1)) - 1;
    const collection = document.querySelector(`#players .player[data-seat="${entry.seat}"] .collection`);
    fly(before.rows[row] ?? [], collection, "anim-take");
    if (removedRow !== null) fly(before.rows[removedRow] ?? [], document.getElementById("removed"), "anim-removed");
  }
}
