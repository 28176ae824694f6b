"""The game review in a real browser: a person who blunders on purpose finishes a game, asks for the
review on the end screen and follows its progress, a spectator sees it too; the replay viewer draws
the win-chance graph, a click on a blunder in the move list shows the position before it with the best
move outlined, the keyboard steps from mark to mark, a what-if line is tried and left, and the page
holds at a phone's width."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_browser import TIMEOUT, new_page
from tests.servers import ServeProcess, Servers

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

#: search iterations per reviewed position: small, so that the review takes a few seconds, and enough
#: that a loss of a third of the win chance stands out of the noise (at 60 it is about ±0.3)
REVIEW_BUDGET = 400
#: hang guards (ms / s) for a bot's move, a hint and the review: never waited out when all is well
REVIEW_TIMEOUT = 180_000
HANG_GUARD = 150.0
#: the person plays the hint's worst move when it gives away at least this much win chance, or
#: (a game won or lost already) this many expected points (the review's blunder: 0.15 or 6 points) ...
BLUNDER_GAP = 0.3
BLUNDER_POINTS = 9.0
#: ... this many times in the game; the hint's best move otherwise
BLUNDERS = 3
#: games played at most to find one with such a move
GAMES = 4

#: what flashes by too briefly to poll for: whether the review's progress bar was shown
WATCH_SCRIPT = """
window.__seen = { progress: [] };
new MutationObserver(() => {
  const bar = document.querySelector("#final .review-progress");
  if (bar) window.__seen.progress.push([Number(bar.value), Number(bar.max)]);
}).observe(document, { subtree: true, childList: true, attributes: true });
"""


@pytest.fixture(scope="module")
def review_server(module_servers: Servers) -> ServeProcess:
    return module_servers.one(bot_delay=0.02, env={"COLORETTO_REVIEW_BUDGET": str(REVIEW_BUDGET)})


def call(client: httpx.Client, method: str, path: str, **kwargs: Any) -> Any:
    """A JSON call; a ``busy`` answer (the worker pool is full) is asked again, within the hang guard."""
    deadline = time.monotonic() + HANG_GUARD
    while True:
        response = client.request(method, path, **kwargs)
        if response.status_code != 429 or time.monotonic() > deadline:
            assert response.status_code < 300, response.text
            return response.json()
        time.sleep(float(response.headers.get("Retry-After", "0.5")))


def play_with_blunders(base: str, game_id: str, token: str) -> list[int]:
    """Play seat 0 to the end by the server's hints: the best move, except (``BLUNDERS`` times) the
    worst when it gives away ``BLUNDER_GAP`` of the win chance or ``BLUNDER_POINTS`` points. Returns
    the positions the blunders were made from."""
    blunders: list[int] = []
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        deadline = time.monotonic() + HANG_GUARD
        while True:
            assert time.monotonic() < deadline, "the game does not end"
            state = call(client, "GET", f"/api/games/{game_id}")
            if state["game"]["status"] == "finished":
                return blunders
            if state["to_move"] != state["you"] or not state["legal"]:
                time.sleep(0.02)  # a poll for the bot's move, not a wait for it: the guard bounds it
                continue
            legal = state["legal"]
            action = legal[0]
            if len(legal) > 1:
                hint = call(client, "POST", f"/api/games/{game_id}/hint")
                actions = hint["actions"]
                best = actions[0]
                by_win = min(actions, key=lambda a: a["win_probability"])
                by_points = min(actions, key=lambda a: a["expected_score"])
                action = best["action"]
                if len(blunders) < BLUNDERS:
                    if best["win_probability"] - by_win["win_probability"] >= BLUNDER_GAP:
                        action = by_win["action"]
                    elif best["expected_score"] - by_points["expected_score"] >= BLUNDER_POINTS:
                        action = by_points["action"]
                    if action != best["action"]:
                        blunders.append(state["move_number"])
            call(
                client,
                "POST",
                f"/api/games/{game_id}/actions",
                json={"action": action, "move": state["move_number"]},
            )


def wait_for_review(page: Any) -> None:
    """Until the end screen's review is done (its link shows) or failed, which fails the test."""
    widget = page.locator("#final .review-widget")
    try:
        page.wait_for_function(
            "document.querySelector('#final .review-open')"
            " || document.querySelector('#final [data-review-status=failed]')",
            timeout=REVIEW_TIMEOUT,
        )
    except Exception as exc:  # say what the page shows, not only that it timed out
        raise AssertionError(f"the review did not end: the page shows {widget.inner_text()!r}") from exc
    assert widget.get_attribute("data-review-status") == "done", widget.inner_text()


def new_game(base: str) -> tuple[str, str]:
    """A two-player game of Ann (a person) against the greedy bot: its id and Ann's token."""
    created = httpx.post(
        f"{base}/api/games",
        json={
            "name": "review",
            "seats": [{"kind": "human"}, {"kind": "bot", "bot": "greedy"}],
            "creator_name": "Ann",
        },
        timeout=30,
    ).json()
    return created["game"]["id"], created["token"]


def best_move_outline(page: Any, best: str) -> Any:
    """The element of the table the best move ``best`` outlines: a row, or the draw area."""
    row = re.fullmatch(r"[pt](\d+)", best)
    if row:
        return page.locator(f"#rows .row.best-move[data-row='{row.group(1)}']")
    assert best == "d", best
    return page.locator("#draw-area.best-move")


def position_shown(page: Any) -> int:
    return int(page.inner_text("#position").split()[1])


def test_a_blunder_is_reviewed_and_shown_with_the_best_move(
    review_server: ServeProcess, browser: Any, screenshots: Path | None
) -> None:
    base = review_server.url
    # A game has a move that gives away that much about four times in five (the deal decides):
    # another game is played when one had none, so that the test does not depend on one deal.
    for _ in range(GAMES):
        game_id, token = new_game(base)
        # Ann's table is open while she plays, with her seat's token (as the lobby's page keeps it)
        ann = new_page(browser)
        seat = json.dumps(json.dumps({"seat": 0, "token": token}))
        ann.add_init_script(f"localStorage.setItem('coloretto.seat.{game_id}', {seat});")
        ann.add_init_script(WATCH_SCRIPT)
        ann.goto(f"{base}/games/{game_id}")
        ann.wait_for_selector(".row", timeout=4 * TIMEOUT)
        made = play_with_blunders(base, game_id, token)
        if made:
            break
        ann.context.close()
    assert made, f"in {GAMES} games the person never had a move that gave away a third or 9 points"

    # The end screen offers the review, to Ann and to a spectator, who have both not seen it yet.
    ann.wait_for_function("document.body.dataset.status === 'finished'", timeout=REVIEW_TIMEOUT)
    start = ann.locator("#final .review-start")
    start.wait_for(timeout=TIMEOUT)
    assert start.inner_text() == "Review this game"
    watcher = new_page(browser)
    watcher.goto(f"{base}/games/{game_id}")
    watcher.locator("#final .review-start").wait_for(timeout=TIMEOUT)
    start.click()
    wait_for_review(ann)
    progress = ann.evaluate("window.__seen.progress")
    assert progress and all(0 <= done <= total for done, total in progress), progress
    # the spectator's table is told that the review is done, and links to it without a reload
    wait_for_review(watcher)
    assert watcher.locator("#final .review-summary tbody tr").count() == 2
    assert ann.locator("#final .review-summary tbody tr").count() == 2
    if screenshots is not None:
        ann.screenshot(path=str(screenshots / "review-end.png"), full_page=True)

    status = httpx.get(f"{base}/api/games/{game_id}/review", timeout=30).json()
    assert status["status"] == "done"
    review = status["review"]
    blunders = [
        k for k, m in enumerate(review["moves"]) if m["decision"] and m["decision"]["mark"] == "blunder"
    ]
    # Ann's deliberate blunders are marked (what she gave away is past the noise at this budget)
    own = [k for k in blunders if k in made]
    assert own, f"none of the blunders made from positions {made} is marked; marked: {blunders}"
    k = own[0]
    decision = review["moves"][k]["decision"]

    # The replay viewer with the review: the graph is drawn, the summary and the moves listed.
    ann.click("#final .review-open")
    ann.wait_for_url(f"**/games/{game_id}/replay*", timeout=TIMEOUT)
    ann.locator("#move-list li").first.wait_for(timeout=REVIEW_TIMEOUT)
    painted = ann.evaluate(
        """(() => {
          const c = document.getElementById('win-chart');
          const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          let n = 0;
          for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
          return { width: c.width, height: c.height, painted: n };
        })()"""
    )
    assert painted["width"] > 100 and painted["height"] > 100 and painted["painted"] > 1000, painted
    assert ann.get_attribute("#win-chart", "aria-label")
    assert ann.locator("#move-list li").count() == len(review["moves"])
    assert ann.locator("#summary .review-summary tbody tr").count() == 2
    frames = httpx.get(f"{base}/api/games/{game_id}/replay", timeout=30).json()["frames"]
    assert len(frames) == len(review["positions"])

    # A click on the blunder in the move list: the position before it, the best move outlined.
    blunder = ann.locator(f"#move-list li[data-move='{k + 1}'] button")
    assert "??" in blunder.inner_text()
    blunder.click()
    assert position_shown(ann) == k
    entry = frames[k]["entry"]
    expected = f"{entry['number']}. {entry['text']}" if entry else "The deal, before the first move."
    assert ann.inner_text("#move-text") == expected
    assert best_move_outline(ann, decision["best"]).count() == 1
    assert ann.locator("#rows .row.best-move, #draw-area.best-move").count() == 1
    shown = ann.inner_text("#decision")
    assert "?? blunder" in shown and f"Move {k + 1}:" in shown
    assert ann.locator("#decision .review-lines tbody tr").count() == len(decision["lines"])
    if screenshots is not None:
        ann.screenshot(path=str(screenshots / "review.png"), full_page=True)

    # The keyboard: the next marked move (n) and back (p), a step (→).
    marked = [j for j, m in enumerate(review["moves"]) if m["decision"] and m["decision"]["mark"]]
    later = [j for j in marked if j > k]
    earlier = [j for j in marked if j < k]
    ann.keyboard.press("n")
    assert position_shown(ann) == (later[0] if later else k)
    ann.keyboard.press("p")  # from the next marked move back to the blunder; from the last, the one before
    assert position_shown(ann) == (k if later or not earlier else earlier[-1])
    if not later and earlier:
        ann.keyboard.press("n")
        assert position_shown(ann) == k
    ann.keyboard.press("ArrowRight")
    assert position_shown(ann) == k + 1
    assert "N" in ann.inner_text("#keys-legend") and "marked move" in ann.inner_text("#keys-legend")

    # A click on the graph goes to the position under it: the left edge is the deal, the right the end.
    canvas = ann.locator("#win-chart")
    box = canvas.bounding_box()
    assert box is not None
    canvas.click(position={"x": box["width"] - 4, "y": box["height"] / 3})
    right = position_shown(ann)
    canvas.click(position={"x": 60, "y": box["height"] / 3})
    assert position_shown(ann) < right

    # What if: the best move instead of the blunder, analysed; then back to the game.
    ann.locator(f"#move-list li[data-move='{k + 1}'] button").click()
    ann.click("#whatif-start")
    ann.locator("#whatif-legal button").first.wait_for(timeout=REVIEW_TIMEOUT)
    offered = ann.locator("#whatif-legal button").evaluate_all("bs => bs.map(b => b.dataset.action)")
    assert review["moves"][k]["played"] in offered and decision["best"] in offered
    ann.click(f"#whatif-legal button[data-action='{decision['best']}']")
    ann.locator("#whatif-line .whatif-steps li").wait_for(timeout=REVIEW_TIMEOUT)
    ann.wait_for_function("!document.querySelector('#whatif-analysis [role=status]')", timeout=REVIEW_TIMEOUT)
    assert ann.locator("#whatif-analysis .seat-chances li").count() == 2
    assert ann.inner_text("#move-text").startswith("What if:")
    if screenshots is not None:
        ann.screenshot(path=str(screenshots / "whatif.png"), full_page=True)
    ann.click("#whatif-back")
    assert ann.locator("#whatif-body").is_hidden()
    assert position_shown(ann) == k and ann.inner_text("#move-text") == expected
    assert best_move_outline(ann, decision["best"]).count() == 1
    # a line of the decision is tried from its table at once; Escape leaves the what-if
    ann.click(f"#decision .review-lines tr[data-action='{decision['best']}'] button")
    ann.locator("#whatif-line .whatif-steps li").wait_for(timeout=REVIEW_TIMEOUT)
    ann.keyboard.press("Escape")
    assert ann.locator("#whatif-body").is_hidden() and position_shown(ann) == k
    assert ann.errors == [] and watcher.errors == []

    # A phone's width: nothing wider than the screen.
    phone = new_page(browser, width=390, height=844)
    phone.goto(f"{base}/games/{game_id}/replay")
    phone.locator("#move-list li").first.wait_for(timeout=REVIEW_TIMEOUT)
    phone.locator(f"#move-list li[data-move='{k + 1}'] button").click()
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    if screenshots is not None:
        phone.screenshot(path=str(screenshots / "review-phone.png"), full_page=True)
    phone.goto(f"{base}/games/{game_id}")
    phone.locator("#final .review-open").wait_for(timeout=REVIEW_TIMEOUT)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    assert phone.errors == []


def test_the_chart_library_is_served_from_the_package(review_server: ServeProcess) -> None:
    """No CDN: the replay page loads its scripts from this server, the chart library among them."""
    page = httpx.get(f"{review_server.url}/games/xxxxxxxx/replay", timeout=30).text
    sources = re.findall(r"<script[^>]*\ssrc=\"([^\"]+)\"", page)
    assert "/static/vendor/chart.umd.min.js" in sources
    assert all(src.startswith("/static/") for src in sources), sources
    chart = httpx.get(f"{review_server.url}/static/vendor/chart.umd.min.js", timeout=30)
    assert chart.status_code == 200 and "Chart.js v4" in chart.text[:200]
    licence = httpx.get(f"{review_server.url}/static/vendor/chart.js-LICENSE.md", timeout=30)
    assert licence.status_code == 200 and "MIT" in licence.text
