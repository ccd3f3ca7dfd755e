"""Play: a strategy played in the real game, without sockets.

- :mod:`~solver.play.policy`: the translated policy (a real betting history walked
  through the abstract tree; an opponent's bet sizes mapped by action translation), one
  hand at a time or every hand at once (range queries);
- :mod:`~solver.play.player`: a strategy file made playable (bucket tables attached,
  bucket functions, its translated policy); the file format itself is
  :mod:`solver.strategy_io`;
- :mod:`~solver.play.blind`: card-blind policies, the reference bots as functions of the
  real betting state.

``agent`` plays these over the wire; :mod:`solver.evaluation` measures them. Before the
sub-packages these modules sat at ``solver/policy.py`` and ``solver/blind.py``;
``player`` was part of ``solver/strategy_io.py`` (``StrategyFile.translated``,
``bucket_fn``, ``bucket_batch_fn`` and ``open_strategy(tables=...)``).
"""
