"""Play: a strategy played in the real game, without sockets.

- :mod:`~solver.play.policy`: the translated policy (a real betting history walked
  through the abstract tree; an opponent's bet sizes mapped by action translation), one
  hand at a time or every hand at once (range queries);
- :mod:`~solver.play.blind`: card-blind policies, the reference bots as functions of the
  real betting state.

``agent`` plays these over the wire; :mod:`solver.evaluation` measures them. Before the
sub-packages these modules sat at ``solver/policy.py`` and ``solver/blind.py``.
"""
