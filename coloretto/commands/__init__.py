"""Subcommands of the ``coloretto`` command line, one module each."""
