"""Subcommands of the ``pokerbot`` command line (see :mod:`agent.cli`)."""
