"""What makes the strategy: the abstract game, the algorithms that solve it, the file
that carries the result, and the measures of how good it is.

The package has a core and three sub-packages. The core is what every part shares:

- :mod:`solver.tree`: the public betting tree of the abstract game, as flat arrays;
- :mod:`solver.chance`: the chance layer (private hands, boards, bucket maps) and the
  lossless buckets;
- :mod:`solver.problem`: a game ready to solve (tree x chance layer x table layout);
- :mod:`solver.strategy`: the strategy profile a solver outputs;
- :mod:`solver._kernels`: the numba kernels that vector CFR and best response share;
- :mod:`solver.strategy_io`: the strategy file format (imports no algorithm);
- :mod:`solver.arrayfile`: the layout strategy files and training checkpoints share (a
  msgpack header and raw arrays, written piece by piece, read by mapping).

Sub-packages, each importing the core and none importing ``agent``:

- :mod:`solver.training`: the CFR family, their kernels and the training run
  (:mod:`solver.training.config` and :func:`solver.training.run.run_training`: what
  ``pokerbot train`` runs; the loop, checkpoints, memory estimates);
- :mod:`solver.play`: a strategy played in the real game (the translated policy and
  range queries, the playable policy of an opened strategy file, card-blind policies);
- :mod:`solver.evaluation`: how good a strategy is (best response, real-game response,
  head-to-head, local best response, AIVAT); it reads players through :mod:`solver.play`;
- :mod:`solver.resolve`: solving the subgame a hand is in while it is played (vector-form
  CFR+ and Discounted CFR, the re-solving gadget, the re-solving player's hand logic);
  it reads the blueprint through :mod:`solver.play` and uses :mod:`solver.evaluation`
  (the terminal sums, the real-game response for the gadget's alternatives).

Where the modules of the flat layout went (old path -> new path)::

    solver/algorithms.py, cfr.py, vector_cfr.py, history_cfr.py,
      mccfr.py, tcfr.py, sampled.py, _sampling_kernels.py, dealt.py,
      checkpoint.py, memory.py                  -> solver/training/<same name>.py
    solver/training.py                          -> solver/training/loop.py
    solver/best_response.py, real_response.py, head_to_head.py,
      lbr.py, aivat.py, _matchup.py, _terminal.py -> solver/evaluation/<same name>.py
    solver/policy.py, blind.py                  -> solver/play/<same name>.py
    solver/strategy_io.py                       -> the file format stays; the tables
                                                   and the translated policy of an opened
                                                   file: solver/play/player.py
    solver/tree.py, chance.py, problem.py, strategy.py, _kernels.py
                                                -> unchanged (the core)
"""
