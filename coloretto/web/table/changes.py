"""The live protocol's changes: what a watcher's view gained since the one it was last sent.

A client of protocol 2 is sent its whole view once (on connecting, on taking a seat, when it asks
with ``sync``), tagged with a version; after that, for every change of its table, only what
changed, from the version it has to the next one::

    {"type": "change", "from": 41, "v": 42,
     "set": {"move_number": 17, "rows/1/cards": [3, 7], "players/2/score": 9, ...},
     "unset": [],                           (paths gone from the view: none today)
     "log_from": 16, "log": [{...}]}        (the log's entries from that index on; absent when
                                             the log did not change)

A path names a place in the view: keys of objects and indexes of lists, joined by ``/``. Objects
are compared key by key and lists of the same length item by item, down to what changed; anything
else that changed (a number, a list that grew) is sent whole. The server works out every fact of
the view (:mod:`coloretto.web.table.views`); the client only puts the values where the paths say
(:func:`apply_change`, and the same few lines in the page's ``table.js``): no rule is known twice.
The view is the one :func:`~coloretto.web.table.views.table_state` makes, without its log (sent
as the entries added) and its card legend (never changes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: the protocols a client may ask for (``?protocol=N`` on the WebSocket's URL): 1, the whole table
#: after every change (the default, for clients written before 2); 2, the table once, then changes
PROTOCOLS = (1, 2)
#: what the view sent as changes leaves out: the log (its new entries are sent) and the legend
NOT_IN_VIEW = frozenset({"log", "cards"})


@dataclass(frozen=True)
class SentView:
    """The view last sent to the watchers of one seat (or to the spectators) of a game."""

    version: int
    view: dict[str, Any]  #: the table's state as JSON values, without :data:`NOT_IN_VIEW`
    deal: int  #: the game of the match whose log it showed
    #: the log's entries as JSON text (the list the game keeps, shared: never changed in place)
    log: list[str]

    def shows(self, view: dict[str, Any], deal: int, log: list[str]) -> bool:
        """Whether it is that view (the log compared entry by entry: an entry taken back and
        another in its place is a change)."""
        return self.deal == deal and (self.log is log or self.log == log) and self.view == view


def view_changes(old: Any, new: Any) -> tuple[dict[str, Any], list[str]]:
    """The paths whose values differ from ``old`` to ``new`` (the new values), and the paths of
    ``old`` that ``new`` no longer has.

    >>> view_changes({"a": 1, "b": [1, {"c": 2}]}, {"a": 1, "b": [1, {"c": 3}], "d": None})
    ({'b/1/c': 3, 'd': None}, [])
    >>> view_changes({"rows": [[1], [2]]}, {"rows": [[1]]})
    ({'rows': [[1]]}, [])
    """
    changed: dict[str, Any] = {}
    removed: list[str] = []
    _compare(old, new, "", changed, removed)
    return changed, removed


def _compare(old: Any, new: Any, path: str, changed: dict[str, Any], removed: list[str]) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict) and not any("/" in key for key in new):
        prefix = f"{path}/" if path else ""
        for key, value in new.items():
            if key in old:
                _compare(old[key], value, prefix + key, changed, removed)
            else:
                changed[prefix + key] = value
        removed.extend(prefix + key for key in old if key not in new)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new) and path:
        for index, (before, after) in enumerate(zip(old, new, strict=True)):
            _compare(before, after, f"{path}/{index}", changed, removed)
    else:  # a value, a list that grew or shrank, or an object whose key a path cannot name
        changed[path] = new


def change_message(before: SentView, after: SentView) -> str:
    """The ``change`` message from ``before`` to ``after`` as JSON text (the log's entries put in
    as the JSON they are kept as)."""
    changed, removed = view_changes(before.view, after.view)
    body: dict[str, Any] = {"type": "change", "from": before.version, "v": after.version, "set": changed}
    if removed:
        body["unset"] = removed
    text = json.dumps(body, separators=(",", ":"))
    told = len(before.log)
    # the log went on from what the client has, or (another game of the match, a move taken back
    # and another made in its place) it is sent anew
    goes_on = after.deal == before.deal and after.log[:told] == before.log
    start = told if goes_on else 0
    if goes_on and start == len(after.log):
        return text
    added = ",".join(after.log[start:])
    return f'{text[:-1]},"log_from":{start},"log":[{added}]}}'


def apply_change(state: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """The state a ``change`` makes of ``state`` (a whole view as sent in a ``state`` message),
    as a client applies it; ``state`` is left as it was (what the change touches is copied, the
    rest shared). The reference for the page's copy of it in ``table.js``.

    >>> apply_change({"a": {"b": [1, 2]}, "log": [1]}, {"set": {"a/b/1": 5}, "log_from": 1, "log": [2]})
    {'a': {'b': [1, 5]}, 'log': [1, 2]}
    """
    result = dict(state)
    copied = {id(result)}
    for path, value in change.get("set", {}).items():
        parent, key = _parent(result, path, copied)
        parent[key] = value
    for path in change.get("unset", []):
        parent, key = _parent(result, path, copied)
        del parent[key]
    if "log" in change:
        result["log"] = result["log"][: change["log_from"]] + change["log"]
    return result


def _parent(view: dict[str, Any], path: str, copied: set[int]) -> tuple[Any, Any]:
    """The object or list a path's last step is in (copied, when it was not yet), and that step."""
    *steps, last = path.split("/")
    place: Any = view
    for step in steps:
        key: Any = int(step) if isinstance(place, list) else step
        inner = place[key]
        if id(inner) not in copied:
            inner = list(inner) if isinstance(inner, list) else dict(inner)
            place[key] = inner
            copied.add(id(inner))
        place = inner
    return place, int(last) if isinstance(place, list) else last
