"""Research environments: PettingZoo, OpenSpiel and Gymnasium faces of the engine.

Each lives in its own module and imports its framework only when imported
(``pip install coloretto[rl]``). The observation vector and the action
encoding they share are in :mod:`coloretto.envs.encoding` and are documented
in ``docs/research.md``.
"""
