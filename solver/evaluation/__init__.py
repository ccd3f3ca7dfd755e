"""Evaluation: how good a strategy is, exactly where it can be computed and by sampling
where it cannot.

- :mod:`~solver.evaluation.best_response`: exact best response and exploitability in the
  abstract game;
- :mod:`~solver.evaluation.real_response`: exact exploitability of a translated player in
  the real game, against a responder that may bet any size (and the depth-limited best
  response a re-solve's gadget takes its values from, leaves by
  :mod:`~solver.evaluation.runouts`: showdowns over drawn or enumerated run-outs);
- :mod:`~solver.evaluation.head_to_head`: the exact value of two translated players
  against each other (:mod:`~solver.evaluation._terminal`: O(n) terminal values);
- :mod:`~solver.evaluation.lbr`: local best response (Lisy and Bowling 2017);
- :mod:`~solver.evaluation.aivat`: AIVAT variance reduction of a match log (Burch et al.
  2018; :mod:`~solver.evaluation._matchup`: exact matchup equity).

Players are read through :mod:`solver.play`. Before the sub-packages these modules sat at
``solver/<name>.py`` (``solver/real_response.py``, ``solver/lbr.py``, ...).
"""
