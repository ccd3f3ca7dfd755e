"""Solving the part of the game the hand is in, while it is played.

- :mod:`solver.resolve.subgame`: a subgame rooted at a real public state, its betting
  tree built from the real chips and the later streets' cards enumerated, solved in
  vector form over every private hand (CFR+, or Discounted CFR), optionally behind the
  re-solving gadget that keeps it safe; and the exact best response inside it;
- :mod:`solver.resolve.ranges`: both seats' ranges at a real history as the blueprint
  sees them (each real action read through the translation), for a re-solve's root;
- :mod:`solver.resolve.player`: a hand of the re-solving player: the blueprint until the
  opponent leaves the tree, then subgames behind the gadget (to the end of the hand on
  the turn and river, to the street's end before), nested and continual;
- :mod:`solver.resolve.exact`: the re-solving player tabulated over the real game, and
  its exact exploitability against a responder that may bet every amount.

It imports the core and :mod:`solver.evaluation` (terminal sums, the real-game walks), and nothing of ``agent``.
"""

#: What keeps a re-solve safe (:class:`solver.resolve.player.ResolveOptions`): the
#: opponent's best-response values as the gadget's alternatives, its values playing on as
#: the blueprint (or the last solution), or no gadget. Here, where parsing the options
#: imports nothing heavy.
GADGETS = ("safe", "estimated", "none")
