"""Every bot name, in one table: what each kind is, where it lives, how strong it is.

The table is static: a bot's module is imported only when that bot is built,
so listing or checking bot names (:func:`available_bots`, :func:`check_bot`)
loads neither the compiled search kernel nor OpenSpiel.

>>> check_bot("mcts:250ms,rollout=random").limit
Limit(time=0.25, iterations=None)
>>> list(available_bots())[:3]
['random', 'greedy', 'easy']

Plug-ins add kinds of their own with :func:`register_bot`.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from coloretto.bots.base import Bot, BotSpec, BotSpecError
from coloretto.bots.limits import Limit, LimitError
from coloretto.bots.mcts_options import read_mcts_options

#: reads the text after a kind's colon into (limit, settings), raising
#: BotSpecError (or LimitError) for options the kind does not take
OptionReader = Callable[[str], tuple[Limit | None, object]]
#: the files on this machine that the text after a kind's colon names, found without opening them
FileNamer = Callable[[str], tuple[str, ...]]
#: a plug-in's factory: the text after the colon ('' if none) and the seed
BotFactory = Callable[[str, int | None], Bot]


def _read_ppo_options(options: str) -> tuple[Limit | None, object]:
    from coloretto.bots.ppo import read_ppo_options  # NumPy only when a ppo name is read

    return read_ppo_options(options)


def _ppo_files(options: str) -> tuple[str, ...]:
    from coloretto.bots.ppo import ppo_files

    return ppo_files(options)


def _read_playout_options(options: str) -> tuple[Limit | None, object]:
    from coloretto.bots.playout_options import read_playout_options

    return read_playout_options(options)


def _playout_files(options: str) -> tuple[str, ...]:
    from coloretto.bots.playout_options import playout_files

    return playout_files(options)


def no_files(options: str) -> tuple[str, ...]:
    return ()


def no_options(options: str) -> tuple[Limit | None, object]:
    if options:
        raise BotSpecError(f"it takes no options, got {options!r}")
    return None, None


def limit_only(default: Limit) -> OptionReader:
    """Options that are only a limit (:meth:`Limit.parse`), ``default`` if none."""

    def read(options: str) -> tuple[Limit | None, object]:
        return (Limit.parse(options) if options.strip() else default), None

    return read


@dataclass(frozen=True)
class BotKind:
    """One row of the table."""

    name: str  #: what comes before the colon: ``"mcts"``
    description: str  #: one line, for ``--list-bots`` and the play screens
    #: rank for lists of bots, weakest first; kinds of about the same strength share one
    strength: int
    #: where its class lives, as ``"module:Class"``; imported only when the bot is built
    target: str = ""
    #: a difficulty level: the bot name it stands for (``"mcts:8000,0.5s,take=12,explore=0.02"``);
    #: it takes no options
    plays: str = ""
    read_options: OptionReader = no_options
    #: the files its options name (a weights or policy file), which a server does not let its users name
    named_files: FileNamer = no_files
    #: a plug-in's factory, instead of ``target``
    factory: BotFactory | None = None
    #: an optional package the bot needs (looked for, not imported, when the name is checked)
    needs: str = ""
    #: how to install it
    install: str = ""


#: the built-in kinds, weakest first. Strength is measured by the arena (docs/ai/experiments.md,
#: "AI"); openspiel-mcts, a generic opponent for research, comes last.
BUILTIN_KINDS: tuple[BotKind, ...] = (
    BotKind("random", "uniformly random legal actions", 0, "coloretto.bots.simple:RandomBot"),
    BotKind("greedy", "takes the row that most raises its score now", 1, "coloretto.bots.simple:GreedyBot"),
    BotKind("easy", "difficulty level: greedy", 1, plays="greedy"),
    BotKind(
        "playout",
        "a playout policy of the search as a bot: playout (greedy), playout:tuned, playout:take=12,explore=0",
        1,
        "coloretto.bots.playout:PlayoutBot",
        read_options=_read_playout_options,
        named_files=_playout_files,
    ),
    BotKind(
        "builder",
        "sparring partner: builds its best three colours, takes a row once it adds enough, ignores opponents",
        1,
        "coloretto.bots.builder:BuilderBot",
    ),
    BotKind(
        "heuristic",
        "expert rules of thumb: row packages, prospects, opponents' colours",
        2,
        "coloretto.bots.heuristic:HeuristicBot",
    ),
    BotKind("medium", "difficulty level: heuristic", 2, plays="heuristic"),
    BotKind(
        "ppo",
        "a neural policy trained by PPO with action masking (coloretto train-ppo); ppo:FILE.npz, ppo:sample",
        2,
        "coloretto.bots.ppo:PPOBot",
        read_options=_read_ppo_options,
        named_files=_ppo_files,
    ),
    BotKind(
        "hard",
        "difficulty level: mcts:8000,0.5s,take=12,explore=0.02",
        3,
        plays="mcts:8000,0.5s,take=12,explore=0.02",
    ),
    BotKind(
        "expert",
        "difficulty level: mcts:1s,threads=2,take=12,explore=0.02",
        4,
        plays="mcts:1s,threads=2,take=12,explore=0.02",
    ),
    BotKind(
        "mcts",
        "Monte Carlo tree search with chance nodes: mcts:1s (time per move) or mcts:5000 (iterations)",
        4,
        "coloretto.bots.mcts:MCTSBot",
        read_options=read_mcts_options,
    ),
    BotKind(
        "openspiel-mcts",
        "OpenSpiel's C++ MCTS with random rollouts (openspiel-mcts:2000 or openspiel-mcts:0.5s)",
        5,
        "coloretto.envs.openspiel_mcts:OpenSpielMCTSBot",
        read_options=limit_only(Limit(iterations=1000)),
        needs="pyspiel",
        install="OpenSpiel: pip install 'coloretto[rl]'",
    ),
)
_BUILTIN = {kind.name: kind for kind in BUILTIN_KINDS}
#: where a plug-in lands in lists unless it says otherwise: after the built-ins
PLUGIN_STRENGTH = max(kind.strength for kind in BUILTIN_KINDS) + 1
_plugins: dict[str, BotKind] = {}


def register_bot(kind: str, factory: BotFactory, description: str, strength: int = PLUGIN_STRENGTH) -> None:
    """Make ``kind`` (and ``kind:options``) a bot name, for plug-ins.

    ``factory(options, seed)`` builds the bot from the text after the colon
    ('' if none); :func:`check_bot` cannot read a plug-in's options, so the
    factory refuses bad ones (with :class:`BotSpecError`) when the bot is built.
    """
    name = kind.strip().lower()
    if not name or ":" in name or "," in name:
        raise ValueError(f"a bot kind is a word without ':' or ',', not {kind!r}")
    if name in _BUILTIN:
        raise ValueError(f"{name!r} is a built-in bot and cannot be replaced")
    _plugins[name] = BotKind(name, description, strength, read_options=_any_options, factory=factory)


def unregister_bot(kind: str) -> None:
    """Forget a plug-in's kind (a built-in kind cannot be removed)."""
    if _plugins.pop(kind.strip().lower(), None) is None:
        raise ValueError(f"no plug-in bot is called {kind!r}")


def bot_kinds() -> list[BotKind]:
    """Every kind, built-in and plug-in, weakest first."""
    kinds = [*BUILTIN_KINDS, *_plugins.values()]
    return sorted(kinds, key=lambda kind: kind.strength)  # stable: the table's order within a rank


def available_bots() -> dict[str, str]:
    """Every kind with its description, weakest first."""
    return {kind.name: kind.description for kind in bot_kinds()}


def check_bot(spec: str, *, files: bool = True) -> BotSpec:
    """Read and check a bot name (``"greedy"``, ``"mcts:250ms,rollout=random"``,
    ``"hard"``) without building the bot. Raises :class:`BotSpecError`, with a
    one-line message, for a name or options that mean nothing.

    ``files=False`` is for names that come from someone else, over a network: a
    name whose options name a file (``ppo:FILE.npz``, ``playout:weights=FILE.json``)
    is refused before the file is looked for, so that the answer says nothing
    of the machine's files.

    >>> check_bot("ppo:/srv/p.npz", files=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    coloretto.bots.base.BotSpecError: bot 'ppo:/srv/p.npz': it names a file (/srv/p.npz), and only ...
    """
    if not isinstance(spec, str) or not spec.strip():
        raise BotSpecError("a bot needs a name, e.g. greedy")
    name = spec.strip()
    kind_name, _, options = name.partition(":")
    kind = _BUILTIN.get(kind_name.strip().lower()) or _plugins.get(kind_name.strip().lower())
    if kind is None:
        known = ", ".join(available_bots())
        raise BotSpecError("unknown bot {bot}: known bots are {bots}", bot=_shown(name), bots=known)
    if kind.plays:
        if options.strip():
            raise BotSpecError(
                "bot {bot}: the {level} level takes no options", bot=_shown(name), level=kind.name
            )
        return replace(check_bot(kind.plays, files=files), name=name)
    try:
        named = () if files else kind.named_files(options.strip())
        if named:
            raise BotSpecError(
                "it names a file ({file}), and only bots without files may be named here", file=named[0]
            )
        limit, settings = kind.read_options(options.strip())
    except (BotSpecError, LimitError) as exc:
        raise BotSpecError("bot {bot}: {problem}", bot=_shown(name), problem=exc) from None
    if kind.needs and importlib.util.find_spec(kind.needs) is None:
        raise BotSpecError(f"{kind.name} needs {kind.install}")
    return BotSpec(name, kind.name, limit, settings, options.strip())


#: a part of a comma-separated list that starts a bot name of its own: ``kind:``
_NAMED_KIND = re.compile(r"[a-z_][a-z0-9_-]*\s*:", re.IGNORECASE)


def split_bot_list(text: str, words: Iterable[str] = ()) -> list[str]:
    """Bot names separated by commas, where a name's own options are
    separated by commas too: ``"mcts:200,take=12,heuristic"`` → ``["mcts:200,take=12",
    "heuristic"]``.

    A part starts a new name when it is a known kind (with or without
    options), one of ``words`` (such as "human"), or anything written
    ``kind:…``. Any other part is an option of the name before it when it
    looks like one (``key=value``, a limit such as ``1s``) or when that name
    already has options (``ppo:p.npz,sample``); else it is a name of its own,
    which the caller will find unknown. So an option that is itself a bot's
    name (``playout:tuned,greedy``) is read as that bot. Parts are stripped;
    an empty part stays an empty name, for the caller to refuse.

    >>> split_bot_list("human, mcts:5000,1s,take=12, greedy", words=["human"])
    ['human', 'mcts:5000,1s,take=12', 'greedy']
    """
    known = {kind.name for kind in bot_kinds()} | {word.lower() for word in words}
    names: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        starts_a_name = part.partition(":")[0].strip().lower() in known or _NAMED_KIND.match(part)
        is_option = "=" in part or ":" in names[-1] or _is_limit(part) if names else False
        if part and names and names[-1] and not starts_a_name and is_option:
            names[-1] += "," + part
        else:
            names.append(part)
    return names


def _is_limit(text: str) -> bool:
    try:
        Limit.parse(text)
    except LimitError:
        return False
    return True


def make_bot(spec: str | BotSpec, seed: int | None = None) -> Bot:
    """Build a bot from its name (``"greedy"``, ``"mcts:1s"``) or a checked
    :class:`BotSpec`; the bot's ``name`` is the name as written."""
    checked = spec if isinstance(spec, BotSpec) else check_bot(spec)
    kind = _BUILTIN.get(checked.kind) or _plugins.get(checked.kind)
    if kind is None:
        raise BotSpecError(f"unknown bot kind {checked.kind!r}")
    if kind.factory is not None:
        bot = kind.factory(checked.options, seed)
    else:
        module_name, _, class_name = kind.target.partition(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        bot = cls.from_spec(checked, seed)
    bot.name = checked.name
    return bot


def _any_options(options: str) -> tuple[Limit | None, object]:
    return None, None


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")
