"""Research environments: PettingZoo, OpenSpiel and Gymnasium faces of the engine.

Each lives in its own module and imports its framework only when imported
(``pip install coloretto[rl]``); importing :mod:`coloretto.envs.gymnasium`
registers the Gymnasium id ``Coloretto-v0``. The observation vector, the
action encoding and the illegal-action rule they share (an illegal action
changes nothing and costs its seat a penalty; OpenSpiel raises instead, as
OpenSpiel does) are in :mod:`coloretto.envs.encoding` and are documented in
``docs/research/environments.md``.
"""
