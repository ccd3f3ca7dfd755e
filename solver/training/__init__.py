"""Training: the CFR family and everything a training run needs.

- :mod:`~solver.training.algorithms`: the one place mapping an algorithm's name to its
  solver;
- vector form over all private hands: :mod:`~solver.training.vector_cfr` (the core),
  :mod:`~solver.training.cfr` (CFR, CFR+, Linear CFR), :mod:`~solver.training.history_cfr`
  (the same one deal at a time), :mod:`~solver.training.chance_sampling` (chance and public
  chance sampling over the same tables);
- sampled: :mod:`~solver.training.sampled` (the shared core: tables, RNG streams,
  threads), :mod:`~solver.training.mccfr` (external and outcome sampling),
  :mod:`~solver.training.tcfr` (Targeted CFR), :mod:`~solver.training._sampling_kernels`
  (their numba kernel; its argument bundles in :mod:`~solver.training._sampling_bundles`), :mod:`~solver.training.dealt` (dealing from the deck);
- the run: :mod:`~solver.training.config` (a run's typed configuration),
  :mod:`~solver.training.run` (the whole run as one call: what ``pokerbot train`` does),
  :mod:`~solver.training.loop` (timed batches to a budget),
  :mod:`~solver.training.checkpoint` (stop and resume),
  :mod:`~solver.training.memory` (what a run will hold, before it starts),
  :mod:`~solver.training.plan` (a run's predicted time and memory, which ``pokerbot
  train`` prints before its loop).

Before the sub-packages these modules sat at ``solver/<name>.py``
(``solver/training.py`` is now :mod:`solver.training.loop`).
"""
