"""The rules of poker as ACPC defines them: games, cards, the hand evaluator and the state machine."""
