"""The hand state machine: recorded examples, playthroughs, side pots, errors (SPEC §4-6)."""

from __future__ import annotations

import pytest

from poker.cards import card_from_str, parse_cards
from poker.game import load_game, parse_game
from poker.log import format_state_line, format_value
from poker.state import (
    MAX_ACTIONS_PER_ROUND,
    Action,
    ActionKind,
    BettingSyntaxError,
    Deal,
    IllegalActionError,
    LoggedAction,
    State,
    repair,
)

F, C, R = ActionKind.FOLD, ActionKind.CALL, ActionKind.RAISE
NL2 = load_game("holdem.nolimit.2p.reverse_blinds")
L2 = load_game("holdem.limit.2p.reverse_blinds")
NL3 = load_game("holdem.nolimit.3p")
L3 = load_game("holdem.limit.3p")
KUHN3 = load_game("kuhn.limit.3p")
KUHN2 = load_game("kuhn.limit.2p")


def nl_game(stacks, blinds=None, players=3, first="3 1 1 1"):
    """A no-limit hold'em game with the given stacks (and blinds 50/100/0... by default)."""
    blinds = blinds or ([50, 100] + [0] * (players - 2))
    return parse_game(
        f"""GAMEDEF
nolimit
numPlayers = {players}
numRounds = 4
stack = {" ".join(map(str, stacks))}
blind = {" ".join(map(str, blinds))}
firstPlayer = {first}
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
"""
    )


def deal(holes, board):
    """A hold'em deal from text: holes ``['AsAh', 'KsKh']``, board ``'2c7d9h Jc 3d'``."""
    flop, turn, river = board.split()
    return Deal(
        tuple(tuple(parse_cards(h)) for h in holes),
        ((), tuple(parse_cards(flop)), tuple(parse_cards(turn)), tuple(parse_cards(river))),
    )


def playthrough(game, betting, deal_=None):
    """One line per decision point: betting, actor, chips in, legal actions, raise range."""
    lines = []
    state = State.new_hand(game, deal_)
    steps = list(_tokens(betting))
    for i in range(len(steps) + 1):
        raise_range = (
            f" raise=[{state.min_raise_to},{state.max_raise_to}]" if state.can_raise() else ""
        )
        who = "over" if state.is_terminal else f"p{state.actor}"
        lines.append(
            f"{state.betting_string() or '-':<24} {who:<4} round={state.round} "
            f"spent={'|'.join(map(str, state.spent))} "
            f"legal={''.join(k.value for k in state.legal_actions()) or '-'}{raise_range}"
        )
        if i < len(steps):
            state = state.apply(steps[i])
    return "\n".join(lines), state


def _tokens(betting):
    import re

    for m in re.finditer(r"([fcr])(\d*)", betting):
        yield Action(ActionKind(m[1]), int(m[2]) if m[2] else None)


# ---------------------------------------------------------------------- playthroughs (golden)


def test_playthrough_nolimit_2p_resume_hand0():
    # resume/ hand 0: 'r200c/r300c/cc/cc'. Reverse blinds: the SB (position 1) opens
    # preflop, the BB (position 0) opens every later round; flop minimum after r200c is 300.
    text, state = playthrough(NL2, "r200cr300ccccc")
    assert (
        text
        == """\
-                        p1   round=0 spent=100|50 legal=fcr raise=[200,20000]
r200                     p0   round=0 spent=100|200 legal=fcr raise=[300,20000]
r200c/                   p0   round=1 spent=200|200 legal=cr raise=[300,20000]
r200c/r300               p1   round=1 spent=300|200 legal=fcr raise=[400,20000]
r200c/r300c/             p0   round=2 spent=300|300 legal=cr raise=[400,20000]
r200c/r300c/c            p1   round=2 spent=300|300 legal=cr raise=[400,20000]
r200c/r300c/cc/          p0   round=3 spent=300|300 legal=cr raise=[400,20000]
r200c/r300c/cc/c         p1   round=3 spent=300|300 legal=cr raise=[400,20000]
r200c/r300c/cc/cc        over round=3 spent=300|300 legal=-"""
    )
    assert state.betting_string() == "r200c/r300c/cc/cc"


def test_playthrough_limit_2p_capped_preflop():
    # faults/limit_raise_capped: 'rrr' preflop is capped (the BB counts as the opening bet).
    text, state = playthrough(L2, "rrrcrrrrc")
    assert (
        text
        == """\
-                        p1   round=0 spent=10|5 legal=fcr raise=[20,20]
r                        p0   round=0 spent=10|20 legal=fcr raise=[30,30]
rr                       p1   round=0 spent=30|20 legal=fcr raise=[40,40]
rrr                      p0   round=0 spent=30|40 legal=fc
rrrc/                    p0   round=1 spent=40|40 legal=cr raise=[50,50]
rrrc/r                   p1   round=1 spent=50|40 legal=fcr raise=[60,60]
rrrc/rr                  p0   round=1 spent=50|60 legal=fcr raise=[70,70]
rrrc/rrr                 p1   round=1 spent=70|60 legal=fcr raise=[80,80]
rrrc/rrrr                p0   round=1 spent=70|80 legal=fc
rrrc/rrrrc/              p0   round=2 spent=80|80 legal=cr raise=[100,100]"""
    )
    assert [a.amount for a in state.history] == [20, 30, 40, None, 50, 60, 70, 80, None]


def test_playthrough_nolimit_3p_short_all_in():
    # 3p with a short SB: the all-in for less does not lower the minimum, and re-raises it
    # only when 2S - maxSpent is larger (SPEC §4.3).
    game = nl_game([450, 20000, 20000])
    text, _ = playthrough(game, "r300r450r700")
    assert (
        text
        == """\
-                        p2   round=0 spent=50|100|0 legal=fcr raise=[200,20000]
r300                     p0   round=0 spent=50|100|300 legal=fcr raise=[450,450]
r300r450                 p1   round=0 spent=450|100|300 legal=fcr raise=[600,20000]
r300r450r700             p2   round=0 spent=450|700|300 legal=fcr raise=[950,20000]"""
    )


# ---------------------------------------------------------------------- SPEC §4.6 examples


def test_first_legal_nolimit_raise_is_r200():
    s = State.new_hand(NL2)
    assert s.min_raise_to == 200 and s.max_raise_to == 20000
    with pytest.raises(IllegalActionError, match="raise to 199 is below the minimum 200"):
        s.raise_to(199)
    assert s.raise_to(200).betting_string() == "r200"


def test_raise_by_at_least_the_last_raise():
    s = State.new_hand(NL2)
    floors = []
    for to in (1076, 2052, 10852, 19652):
        floors.append(s.min_raise_to)
        s = s.raise_to(to)
    assert floors == [200, 2052, 3028, 19652]
    assert s.betting_string() == "r1076r2052r10852r19652"
    # 2 * 19652 - 10852 = 28452 is above the stack: only all-in remains.
    assert s.raise_floor == 28452
    assert (s.min_raise_to, s.max_raise_to) == (20000, 20000)
    with pytest.raises(IllegalActionError, match="19999 is below the minimum 20000"):
        s.raise_to(19999)
    s = s.raise_to(20000)
    assert not s.can_raise() and s.legal_actions() == [F, C]


@pytest.mark.parametrize(
    "betting,minimum",
    [("cc/", 200), ("r200c/", 300), ("cc/cc/cr1899c/c", 1999), ("r200c/r300c/cc/", 400)],
)
def test_later_round_minimum(betting, minimum):
    s = State.from_betting(NL2, betting)
    assert s.min_raise_to == minimum


def test_sizes_are_totals_over_the_hand():
    s = State.from_betting(NL2, "cc/r250")
    assert s.spent == (250, 100) and s.to_call == 150 and s.pot == 350


# ---------------------------------------------------------------------- who acts


def test_reverse_blinds_sb_first_preflop_bb_first_after():
    for game in (NL2, L2):
        s = State.new_hand(game)
        assert s.actor == 1 and s.spent[1] < s.spent[0]  # position 1 is the SB / button
        assert State.from_betting(game, "cc/").actor == 0


def test_three_player_order():
    s = State.new_hand(NL3)
    assert s.actor == 2  # the button opens preflop
    assert s.call().actor == 0 and s.call().call().actor == 1
    s = State.from_betting(NL3, "ccc/")
    assert s.actor == 0  # the SB opens the flop
    # With the SB folded the BB opens later rounds.
    assert State.from_betting(NL3, "r300fc/").actor == 1


def test_check_around_ends_the_round():
    assert State.from_betting(NL3, "ccc/").round == 1
    assert State.from_betting(NL3, "ccc/cc").round == 1
    assert State.from_betting(NL3, "ccc/ccc/").round == 2


def test_all_in_jumps_to_the_last_round():
    s = State.from_betting(NL2, "r20000c///")
    assert s.is_terminal and s.round == 3 and s.actions[1:] == ((), (), ())
    s = State.from_betting(NL2, "cc/r20000c//")
    assert s.is_terminal and s.round == 3
    # A fold ends the hand in its own round.
    s = State.from_betting(NL2, "r200r2436c/r4094f")
    assert s.is_terminal and s.round == 1 and not s.is_showdown


def test_player_all_in_from_the_blind():
    game = nl_game([100, 1000], blinds=[100, 50], players=2, first="2 1 1 1")
    s = State.new_hand(game)
    assert s.actor == 1 and s.all_in == (True, False)
    assert s.legal_actions() == [F, C]  # nobody left to raise against
    s = s.call()
    assert s.is_terminal and s.betting_string() == "c///" and s.spent == (100, 100)


def test_every_player_all_in_from_the_blinds():
    game = nl_game([100, 50], blinds=[100, 50], players=2, first="2 1 1 1")
    s = State.new_hand(game)
    assert s.is_terminal and s.round == 3 and s.betting_string() == "///"


def test_max_actions_per_round():
    s = State.new_hand(NL2)
    to = 200
    while s.can_raise():
        s = s.raise_to(to)
        to += 100
    # A raise is allowed while (actions in the round) + N <= 64.
    assert len(s.round_actions) == MAX_ACTIONS_PER_ROUND - 2 + 1
    with pytest.raises(IllegalActionError, match="63 actions"):
        s.raise_to(to)
    assert repair(s, Action.raise_to(to)) == (Action.call(), "invalid action, changed to call")
    assert s.call().round == 1


def test_all_blinds_zero_minimum_is_one():
    game = nl_game([100, 100], blinds=[0, 0], players=2, first="1 1 1 1")
    s = State.new_hand(game)
    assert s.min_raise_to == 1 and s.raise_to(1).min_raise_to == 2
    assert s.call().call().min_raise_to == 1  # max(1, max(blind)) + maxSpent
    d = deal(["AsAh", "KsKh"], "2c7d9h Jc 3d")
    # Nobody put anything in: the showdown moves no chips.
    assert State.from_betting(game, "cc/cc/cc/cc", d).values() == (0.0, 0.0)


# ---------------------------------------------------------------------- values and pots


def test_kuhn_3p_all_in_raise_and_side_pot():
    # logs/kuhn.limit.3p.example_x3 hand 0: 'rfc' with Ks As Js gives 3|-1|-2.
    d = Deal(((card_from_str("Ks"),), (card_from_str("As"),), (card_from_str("Js"),)), ((),))
    s = State.new_hand(KUHN3, d).raise_to()
    assert s.spent == (2, 1, 1) and s.all_in == (True, False, False)
    assert s.round_actions == (LoggedAction(0, Action.raise_to(2)),)
    s = s.fold().call()
    assert s.is_terminal and s.is_showdown
    assert s.values() == (3.0, -1.0, -2.0)
    # The folder's chip is in the main pot; As folded, so Ks wins it all.
    line = format_state_line(0, s, ["ExampleA", "ExampleB", "ExampleC"])
    assert line == "STATE:0:rfc:Ks|As|Js:3|-1|-2:ExampleA|ExampleB|ExampleC"


def test_three_player_side_pot_with_short_all_in():
    game = nl_game([300, 1000, 1000])
    d = deal(["AsAh", "KsKh", "QsQh"], "2c7d9h Jc 3d")
    s = State.from_betting(game, "r1000cc///", d)
    assert s.spent == (300, 1000, 1000) and s.is_showdown
    # Main pot 900 to the aces; side pot 1400 (700 x 2) to the kings.
    assert s.values() == (600.0, 400.0, -1000.0)
    d2 = deal(["QsQh", "KsKh", "AsAh"], "2c7d9h Jc 3d")
    # Aces now at position 2 win both pots; the short stack loses only its 300.
    assert State.from_betting(game, "r1000cc///", d2).values() == (-300.0, -1000.0, 1300.0)


def test_split_pot_with_half_chips():
    # The SB folds 5 chips; BB and button play the board (a broadway straight): the
    # first layer of 15 splits 7.5 two ways (2.5 each net) and the second is returned.
    d = deal(["2c3d", "2h3s", "4c5d"], "AcKdQh Js Tc")
    s = State.from_betting(L3, "cfc/cc/cc/cc", d)
    assert s.values() == (-5.0, 2.5, 2.5)
    line = format_state_line(7, s, ["A", "B", "C"])
    assert line == "STATE:7:cfc/cc/cc/cc:2c3d|2h3s|4c5d/AcKdQh/Js/Tc:-5|2.5|2.5:A|B|C"


def test_three_way_tie_and_half_chips():
    d = deal(["2c3d", "2h3s", "4c5d"], "AcKdQh Js Tc")  # everyone plays the board
    s = State.from_betting(NL3, "r201cc/ccc/ccc/ccc", d)
    assert s.values() == (0.0, 0.0, 0.0)
    # The button folds 201 after SB raises to 402 and BB calls: the first layer (201 x 3)
    # splits two ways, 100.5 each; the second (201 x 2) goes back to its owners.
    s = State.from_betting(NL3, "r201r402cf/cc/cc/cc", d)
    assert s.values() == (100.5, 100.5, -201.0)
    assert format_state_line(0, s, "ABC").split(":")[4] == "100.5|100.5|-201"


def test_values_from_ranks_known_ahead():
    """A showdown valued from ranks the caller computed (the dealer's, made while it
    waits) is the showdown valued from the deal, side pots, splits and folds included."""
    from poker.evaluator import evaluate

    cases = [
        (nl_game([300, 1000, 1000]), deal(["AsAh", "KsKh", "QsQh"], "2c7d9h Jc 3d"), "r1000cc///"),
        (L3, deal(["2c3d", "2h3s", "4c5d"], "AcKdQh Js Tc"), "cfc/cc/cc/cc"),
        (NL3, deal(["2c3d", "2h3s", "4c5d"], "AcKdQh Js Tc"), "r201r402cf/cc/cc/cc"),
    ]
    for game, d, betting in cases:
        s = State.from_betting(game, betting, d)
        board = d.board_through(game.num_rounds - 1)
        ranks = [evaluate(hole + board) for hole in d.holes]
        assert s.values(ranks) == s.values()
        assert State.from_betting(game, betting).values(ranks) == s.values()  # no deal needed
        with pytest.raises(ValueError, match="ranks given"):
            s.values(ranks[:-1])


def test_values_of_a_fold_need_no_cards():
    s = State.from_betting(NL2, "r300f")
    assert s.deal is None and s.values() == (-100.0, 100.0)
    s = State.from_betting(NL3, "fr300f")
    assert s.values() == (100.0, -100.0, 0.0)
    assert format_value(s.values()[2]) == "0"  # the button folded having put in nothing


def test_values_errors():
    with pytest.raises(ValueError, match="not over"):
        State.from_betting(NL2, "c").values()
    with pytest.raises(ValueError, match="no deal"):
        State.from_betting(NL2, "cc/cc/cc/cc").values()


def test_cards_accessors():
    d = deal(["AsAh", "KsKh"], "2c7d9h Jc 3d")
    s = State.from_betting(NL2, "cc/", d)
    assert s.board() == tuple(parse_cards("2c7d9h")) and s.hole(1) == tuple(parse_cards("KsKh"))
    with pytest.raises(ValueError, match="no deal"):
        State.new_hand(NL2).board()


# ---------------------------------------------------------------------- verify, can, errors


def test_fold_rejected_when_check_is_free():
    s = State.from_betting(NL2, "c")
    assert not s.can_fold() and s.legal_actions() == [C, R]
    with pytest.raises(IllegalActionError, match="checking is free.*100.*100"):
        s.fold()
    assert repair(s, Action.fold()) == (Action.call(), "invalid action, changed to call")


def test_applying_to_a_finished_hand_raises():
    s = State.from_betting(NL2, "f")
    assert s.is_terminal and s.actor is None and s.legal_actions() == []
    assert not (s.can_fold() or s.can_call() or s.can_raise())
    assert s.min_raise_to is None and s.max_raise_to is None
    for act in (Action.fold(), Action.call(), Action.raise_to(300)):
        with pytest.raises(IllegalActionError, match="hand is over"):
            s.apply(act)
    with pytest.raises(IllegalActionError, match="hand is over"):
        repair(s, Action.call())


def test_limit_raise_amounts():
    s = State.new_hand(L2)
    assert s.verify(Action.raise_to()) == Action.raise_to(20)
    assert s.verify(Action.raise_to(20)) == Action.raise_to(20)
    with pytest.raises(IllegalActionError, match="limit raise here is to 20.*not to 25"):
        s.raise_to(25)
    # Kuhn: the raise is capped at the stack, 2.
    assert State.new_hand(KUHN2).raise_to().spent == (2, 1)


def test_nolimit_raise_bounds_and_messages():
    s = State.new_hand(NL2)
    with pytest.raises(IllegalActionError, match="needs a raise-to amount"):
        s.raise_to()
    with pytest.raises(IllegalActionError, match="raise to 20001 is above the maximum 20000"):
        s.raise_to(20001)
    with pytest.raises(IllegalActionError, match="raise to -5 is below the minimum 200"):
        s.raise_to(-5)
    with pytest.raises(IllegalActionError, match="fewer than 2 players can still act"):
        State.from_betting(NL2, "r20000").raise_to(20000)
    s = State.from_betting(NL3, "r20000")
    assert s.actor == 0 and s.num_active == 2
    with pytest.raises(
        IllegalActionError, match="largest bet 20000 already covers position 0's stack 20000"
    ):
        s.raise_to(20000)


def test_raise_cap_message_names_the_numbers():
    s = State.from_betting(L2, "rrr")
    with pytest.raises(IllegalActionError, match="3 raises .* round 0; the game allows 3"):
        s.raise_to()


def test_repair_as_the_dealer_does():
    s = State.from_betting(NL2, "c")
    assert repair(s, Action.raise_to(199)) == (
        Action.raise_to(200),
        "raise of 199 increased to 200",
    )
    assert repair(s, Action.raise_to(0)) == (Action.raise_to(200), "raise of 0 increased to 200")
    assert repair(s, Action.raise_to(21000)) == (
        Action.raise_to(20000),
        "raise of 21000 decreased to 20000",
    )
    assert repair(s, Action.raise_to(500)) == (Action.raise_to(500), None)
    assert repair(s, Action.raise_to()) == (
        Action.call(),
        "bad action format in response, changed to call",
    )
    assert repair(s, Action.call()) == (Action.call(), None)
    assert repair(State.new_hand(NL2), Action.fold()) == (Action.fold(), None)
    s = State.from_betting(L2, "rrr")
    assert repair(s, Action.raise_to()) == (Action.call(), "invalid action, changed to call")


def test_verify_rejects_non_actions():
    with pytest.raises(TypeError):
        State.new_hand(NL2).verify("c")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- betting strings


@pytest.mark.parametrize(
    "game,betting,pattern",
    [
        (NL2, "x", "unexpected character 'x' at offset 0"),
        (NL2, "cc/x", "unexpected character 'x' at offset 3"),
        (NL2, "r", "no-limit raise at offset 0 has no raise-to amount"),
        (NL2, "cr", "no-limit raise at offset 1 has no raise-to amount"),
        (L2, "r20", "limit raise at offset 0 has an amount"),
        (NL2, "cc", "not written canonically: these actions give 'cc/'"),
        (NL2, "c/c", "not written canonically"),
        (NL2, "cc//", "not written canonically"),
        (NL2, "r20000c", "not written canonically: these actions give 'r20000c///'"),
        (NL2, "r0200", "not written canonically"),
        (NL2, "cC", "unexpected character 'C'"),
        (NL2, "c:r200", "unexpected character ':'"),
    ],
)
def test_malformed_betting(game, betting, pattern):
    with pytest.raises(BettingSyntaxError, match=pattern):
        State.from_betting(game, betting)


@pytest.mark.parametrize(
    "game,betting,pattern",
    [
        (
            NL2,
            "cr199",
            r"action 'r199' at offset 1 \(position 0 after 'c'\): raise to 199 is below the minimum 200",
        ),
        (NL2, "r30000", "above the maximum 20000"),
        (NL2, "cf", "fold is not allowed when checking is free"),
        (NL2, "ff", "comes after the hand is over"),
        (NL2, "cc/cc/cc/ccc", "comes after the hand is over"),
        (L2, "rrrr", "3 raises"),
        (KUHN3, "rr", "1 raises"),
    ],
)
def test_illegal_betting(game, betting, pattern):
    with pytest.raises(IllegalActionError, match=pattern):
        State.from_betting(game, betting)


def test_lenient_betting_reads_like_the_dealer():
    s = State.from_betting(NL2, "Cb 200K", strict=False)
    assert s.betting_string() == "cr200c/"
    assert State.from_betting(NL2, "cc", strict=False).betting_string() == "cc/"
    assert State.from_betting(NL2, "c/c/", strict=False).betting_string() == "cc/"
    assert State.from_betting(NL2, "r+0200", strict=False).betting_string() == "r200"
    assert State.from_betting(L2, "RRr", strict=False).betting_string() == "rrr"


def test_betting_round_trip():
    for game, betting in [
        (NL2, "r15938c/r19189c/r19445r19869c/cc"),
        (NL2, "cc/r200r15427f"),
        (L2, "crrrc/rc/crrrrc/rrf"),
        (NL3, "cr19394r20000cf///"),
        (NL3, "r200r2700cc/r5584r8684cc/cr14048r19872r20000cc/"),
        (KUHN3, "ccrcc"),
        (NL2, ""),
    ]:
        s = State.from_betting(game, betting)
        assert s.betting_string() == betting
        assert State.from_betting(game, betting) == s


# ---------------------------------------------------------------------- value object


def test_state_is_an_immutable_value():
    s = State.new_hand(NL2)
    t = s.call()
    assert s.actions == ((),) and t.actions == ((LoggedAction(1, Action.call()),),)
    with pytest.raises(AttributeError):
        s.round = 2  # type: ignore[misc]
    assert State.from_betting(NL2, "r300c/") == State.new_hand(NL2).raise_to(300).call()
    assert hash(State.from_betting(NL2, "r300")) == hash(State.new_hand(NL2).raise_to(300))
    assert State.from_betting(NL2, "c") != State.from_betting(NL3, "c")


def test_constructor_replays_and_checks_the_log():
    s = State.from_betting(L2, "rrrc/r", deal(["AsAh", "KsKh"], "2c7d9h Jc 3d"))
    rebuilt = State(L2, s.actions, s.deal)
    assert rebuilt == s and rebuilt.spent == s.spent and rebuilt.actor == s.actor
    # Limit raise amounts may be left out: the replay fills them in.
    bare = tuple(tuple(LoggedAction(a.actor, Action(a.kind)) for a in r) for r in s.actions)
    assert State(L2, bare, s.deal) == s
    with pytest.raises(IllegalActionError, match="position 0 acting.*position 1 is to act"):
        State(NL2, ((LoggedAction(0, Action.call()),),))
    with pytest.raises(IllegalActionError, match="round 0 but the hand is in round 1"):
        State(
            NL2,
            (
                (
                    LoggedAction(1, Action.call()),
                    LoggedAction(0, Action.call()),
                    LoggedAction(0, Action.call()),
                ),
            ),
        )
    with pytest.raises(IllegalActionError, match="ends in round 0"):
        State(NL2, ((LoggedAction(1, Action.call()), LoggedAction(0, Action.call())),))
    assert State(NL2) == State.new_hand(NL2)


def test_states_pickle():
    import pickle

    s = State.from_betting(NL2, "r300c/", deal(["AsAh", "KsKh"], "2c7d9h Jc 3d"))
    t = pickle.loads(pickle.dumps(s))
    assert t == s and t.spent == s.spent and t.actor == s.actor and t.raise_floor == s.raise_floor


def test_deal_checks():
    with pytest.raises(ValueError, match="repeats a card"):
        Deal(((0, 1), (0, 2)), ())
    with pytest.raises(ValueError, match="outside 0..51"):
        Deal(((52,),), ())
    with pytest.raises(ValueError, match="hole cards"):
        State.new_hand(NL3, deal(["AsAh", "KsKh"], "2c7d9h Jc 3d"))
    with pytest.raises(ValueError, match="not in this game's"):
        State.new_hand(KUHN3, Deal(((0,), (1,), (2,)), ((),)))
    assert str(deal(["AsAh", "KsKh"], "2c7d9h Jc 3d")) == "AsAh|KsKh/2c7d9h/Jc/3d"


def test_action_text():
    assert [
        str(a) for a in (Action.fold(), Action.call(), Action.raise_to(250), Action.raise_to())
    ] == [
        "f",
        "c",
        "r250",
        "r",
    ]
    assert Action.raise_to(30).to_acpc(limit=True) == "r"
    assert Action.parse("r250") == Action.raise_to(250) and Action.parse("f") == Action.fold()
    with pytest.raises(BettingSyntaxError):
        Action.parse("x")
    with pytest.raises(BettingSyntaxError):
        Action.parse("c5")
    with pytest.raises(ValueError, match="only a raise has an amount"):
        Action(ActionKind.CALL, 5)
    with pytest.raises(TypeError):
        Action(ActionKind.RAISE, True)
    with pytest.raises(TypeError):
        Action("r")  # type: ignore[arg-type]


def test_a_raise_then_calls_to_the_river_ends_the_hand():
    s = State.new_hand(NL2).raise_to(300).call().call().call().call().call().call().call()
    assert s.is_terminal and s.is_showdown and s.round == 3


def test_doctests():
    import doctest

    import poker.log
    import poker.rng
    import poker.state

    for module in (poker.state, poker.rng, poker.log):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
