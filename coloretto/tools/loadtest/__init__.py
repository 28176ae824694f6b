"""Load and soak tests of game servers over real WebSockets (``coloretto loadtest``).

:func:`~coloretto.tools.loadtest.run.run_load` plays many games at once for a while and measures
the time from an action to its broadcast, the moves per second, ``/api/health``, ``/metrics`` (its
time and size) and each server's CPU and memory (a kill of one process among several too);
:func:`~coloretto.tools.loadtest.run.run_soak`
plays many whole games to their end and reports every one that stalled. Traffic goes to loopback
addresses only.
"""


class LoadTestError(Exception):
    """The test cannot go on (a server that does not start, or refuses to create a game): one
    line that says why."""
