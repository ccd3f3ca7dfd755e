"""Lossless buckets are suit-isomorphism classes (solver.chance.lossless_bucket): the hand
indexer's index with the hole cards and each street's new board cards a group of their
own. Counts, invariance under suit permutations (and nothing more merged), the chance
layer's table, exact game values, and files written in the older raw numbering."""

from __future__ import annotations

import hashlib
from itertools import combinations, permutations
from pathlib import Path

import msgpack
import numpy as np
import pytest

from poker.cards import deck_cards, parse_cards
from poker.game import load_game, parse_game
from solver.evaluation.best_response import abstract_exploitability, exploitability
from solver.training.cfr import CFRPlusSolver
from solver.chance import (
    build_chance,
    lossless_bucket,
    lossless_bucket_counts,
    lossless_indexer,
    lossless_rounds,
    raw_lossless_bucket,
    raw_lossless_bucket_counts,
)
from solver.training.checkpoint import CheckpointError, load_checkpoint, restore_checkpoint, save_checkpoint
from solver.play.player import bucket_batch_fn, bucket_fn, translated
from solver.problem import make_problem
from solver.arrayfile import ALIGN
from solver.strategy_io import (
    MAGIC,
    StrategyFileError,
    dumps,
    loads,
    loads_file,
    open_strategy,
)

from ._solver_twins import raw_problem

DATA = Path(__file__).parent / "data" / "strategies"
V1_KUHN = DATA / "kuhn.cfr+.v1.strategy"
V2_LEDUC = DATA / "leduc.nolimit.1p-a.cfr+.v2.strategy"
LEDUC = load_game("leduc.limit.2p")
SHORT20 = load_game("holdem.nolimit.2p.short20")
HOLDEM = load_game("holdem.nolimit.2p.reverse_blinds")


# ------------------------------------------------------------------ counts


def test_counts():
    assert lossless_bucket_counts(SHORT20) == (25, 255, 3185, 43460)
    assert lossless_bucket_counts(SHORT20)[-1] * 21 < raw_lossless_bucket_counts(SHORT20)[-1] == 930_240
    assert lossless_bucket_counts(LEDUC) == (3, 15)
    assert lossless_bucket_counts(load_game("kuhn.limit.2p")) == (3,)
    indexer, per_street = lossless_indexer(HOLDEM)
    assert (indexer.rounds, per_street) == ((2, 3, 1, 1), (0, 1, 2, 3))
    assert [indexer.count(r) for r in per_street] == [169, 1_286_792, 55_190_538, 2_428_287_420]
    assert lossless_bucket_counts(HOLDEM) == (169, 1_286_792, 55_190_538, 2_428_287_420)
    assert lossless_indexer(load_game("holdem.limit.2p.reverse_blinds"))[0] is indexer  # one per card layout


def test_rounds_skip_streets_without_new_cards():
    assert lossless_rounds(SHORT20) == ((2, 1, 1, 1), (0, 1, 2, 3))
    assert lossless_rounds(LEDUC) == ((1, 1), (0, 1))
    assert lossless_rounds(load_game("kuhn.limit.2p")) == ((1,), (0,))
    odd = parse_game(
        "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 3\nblind = 1 1\nraiseSize = 2 2 4\n"
        "firstPlayer = 1 1 1\nmaxRaises = 1 1 1\nnumSuits = 2\nnumRanks = 4\nnumHoleCards = 1\n"
        "numBoardCards = 1 0 1\nEND GAMEDEF\n",
        name="odd",
    )
    assert lossless_rounds(odd) == ((1, 1, 1), (1, 1, 2))  # the board card of street 0 is round 1
    ch = build_chance(odd, strength=lambda cards: sum(cards))
    assert ch.n_buckets == lossless_bucket_counts(odd)
    _check_table(odd, ch, range(ch.n_board_states))


# ------------------------------------------------------------------ classes


def _deals(game, street):
    """Every (hole, board) of ``street``: board cards in dealing order, street by street."""
    deck = deck_cards(game.num_ranks, game.num_suits)
    k = game.num_hole_cards
    sizes = game.num_board_cards[: street + 1]

    def boards(left, i):
        if i == len(sizes):
            yield ()
            return
        for new in combinations(left, sizes[i]):
            rest = [c for c in left if c not in new]
            for tail in boards(rest, i + 1):
                yield new + tail

    for board in boards(deck, 0):
        rest = [c for c in deck if c not in board]
        for hole in combinations(rest, k):
            yield hole, board


def _suit_maps(game):
    suits = sorted({c & 3 for c in deck_cards(game.num_ranks, game.num_suits)})
    for perm in permutations(suits):
        yield dict(zip(suits, perm))


def _apply(m, cards):
    return tuple((c & ~3) | m[c & 3] for c in cards)


def _class_key(game, street, hole, board):
    """The class by brute force: the least image of (hole set, each street's new board
    cards as a set) over all suit permutations."""
    groups = []
    pos = 0
    for nb in game.num_board_cards[: street + 1]:
        groups.append(board[pos : pos + nb])
        pos += nb
    return min(
        (tuple(sorted(_apply(m, hole))), *(tuple(sorted(_apply(m, g))) for g in groups))
        for m in _suit_maps(game)
    )


@pytest.mark.parametrize("game", [LEDUC, load_game("kuhn.limit.2p")], ids=["leduc", "kuhn"])
def test_buckets_are_exactly_the_suit_classes(game):
    """Every deal of every street: same bucket if and only if suit-isomorphic, the
    buckets dense, the order of the hole cards irrelevant."""
    for street, count in enumerate(lossless_bucket_counts(game)):
        bucket_of_key: dict[tuple, int] = {}
        key_of_bucket: dict[int, tuple] = {}
        for hole, board in _deals(game, street):
            b = lossless_bucket(game, street, hole, board)
            assert lossless_bucket(game, street, hole[::-1], board) == b
            key = _class_key(game, street, hole, board)
            assert bucket_of_key.setdefault(key, b) == b
            assert key_of_bucket.setdefault(b, key) == key
        assert sorted(key_of_bucket) == list(range(count))


def test_short20_buckets_follow_the_suit_classes():
    """Samples of every street of the 20-card game: the bucket is invariant under all
    24 suit permutations, and two sampled deals share a bucket only if isomorphic."""
    rng = np.random.default_rng(7)
    deck = np.array(deck_cards(SHORT20.num_ranks, SHORT20.num_suits))
    maps = list(_suit_maps(SHORT20))
    assert len(maps) == 24
    for street, count in enumerate(lossless_bucket_counts(SHORT20)):
        n_board = sum(SHORT20.num_board_cards[: street + 1])
        bucket_of_key: dict[tuple, int] = {}
        key_of_bucket: dict[int, tuple] = {}
        for _ in range(400):
            cards = [int(c) for c in rng.choice(deck, 2 + n_board, replace=False)]
            hole, board = tuple(cards[:2]), tuple(cards[2:])
            b = lossless_bucket(SHORT20, street, hole, board)
            assert 0 <= b < count
            for m in maps:
                assert lossless_bucket(SHORT20, street, _apply(m, hole)[::-1], _apply(m, board)) == b
            key = _class_key(SHORT20, street, hole, board)
            assert bucket_of_key.setdefault(key, b) == b
            assert key_of_bucket.setdefault(b, key) == key
        assert len(key_of_bucket) > (100 if street else 20)


def test_showdown_ranks_of_a_big_game_are_the_evaluators():
    """20-card hold'em's 930,240 showdowns are ranked in batches: every final board's
    hands are in the order, and with the keys, that poker.evaluator.evaluate gives them
    one by one (checked on 300 sampled final boards, every hand)."""
    from poker.evaluator import evaluate

    chance = build_chance(SHORT20)
    kc, deck = chance.kernel, chance.deck
    assert int(kc.sd_len.sum()) == 930_240
    level = chance.board_street == SHORT20.num_rounds - 1
    finals = chance.board_cards[level]
    for j in np.random.default_rng(3).choice(finals.shape[0], 300, replace=False):
        board = [deck[x] for x in finals[j] if x >= 0]
        n = kc.sd_len[j]
        want = [evaluate([deck[x] for x in kc.hand_cards[h]] + board) for h in kc.sd_order[j, :n]]
        assert kc.sd_key[j, :n].tolist() == want
        assert want == sorted(want)


def test_the_street_that_dealt_a_card_matters():
    # A-K of spades with the queen of spades on the flop and the jack of hearts on the
    # turn is not the same hand as with the two swapped: no suit permutation maps one on
    # the other, street by street.
    hole = parse_cards("AsKs")
    a = lossless_bucket(SHORT20, 2, hole, parse_cards("QsJh"))
    b = lossless_bucket(SHORT20, 2, hole, parse_cards("JhQs"))
    assert a != b
    # ...while swapping two isomorphic cards is the same class.
    assert lossless_bucket(SHORT20, 2, hole, parse_cards("QhJd")) == lossless_bucket(SHORT20, 2, hole, parse_cards("QdJh"))


def test_bad_cards_are_refused():
    with pytest.raises(ValueError, match="not in"):
        lossless_bucket(LEDUC, 0, [0], [])  # a deuce: not in Leduc's deck
    with pytest.raises(ValueError, match="distinct"):
        lossless_bucket(LEDUC, 1, parse_cards("Ks"), parse_cards("Ks"))
    with pytest.raises(ValueError, match="street 1 has 1 board cards"):
        lossless_bucket(LEDUC, 1, parse_cards("Ks"), [])
    with pytest.raises(ValueError, match="out of range"):
        lossless_bucket(LEDUC, 2, parse_cards("Ks"), parse_cards("Qh"))


# ------------------------------------------------------------------ the chance layer


def _check_table(game, ch, states, hands=None):
    """``ch``'s bucket table equals :func:`lossless_bucket` at ``states`` x ``hands``."""
    checked = 0
    for i in states:
        street = int(ch.board_street[i])
        board = [ch.deck[x] for x in ch.board_cards[i] if x >= 0]
        for h in range(ch.n_hands) if hands is None else hands:
            b = int(ch.kernel.bucket[i, h])
            if b >= 0:
                assert lossless_bucket(game, street, [ch.deck[x] for x in ch.hands[h]], board) == b
                checked += 1
    return checked


def test_chance_table_is_the_lossless_bucket():
    ch = build_chance(LEDUC)
    assert ch.lossless and ch.numbering == "canonical" and ch.n_buckets == (3, 15)
    assert _check_table(LEDUC, ch, range(ch.n_board_states)) == 6 + 6 * 5
    ch = build_chance(SHORT20, strength=lambda cards: 0)
    assert ch.n_buckets == lossless_bucket_counts(SHORT20)
    rng = np.random.default_rng(3)
    for s in range(SHORT20.num_rounds):
        states = np.flatnonzero(ch.board_street == s)
        used = np.unique(ch.kernel.bucket[states])
        assert np.array_equal(used[used >= 0], np.arange(ch.n_buckets[s]))  # dense
        assert _check_table(SHORT20, ch, rng.choice(states, 25), rng.choice(ch.n_hands, 20)) > 300


def test_raw_numbering_still_builds():
    ch = build_chance(LEDUC, numbering="raw")
    assert ch.lossless and ch.numbering == "raw" and ch.n_buckets == raw_lossless_bucket_counts(LEDUC) == (6, 30)
    for i in range(ch.n_board_states):
        board = [ch.deck[x] for x in ch.board_cards[i] if x >= 0]
        for h in range(ch.n_hands):
            b = int(ch.kernel.bucket[i, h])
            if b >= 0:
                assert raw_lossless_bucket(LEDUC, int(ch.board_street[i]), [ch.deck[ch.hands[h][0]]], board) == b
    with pytest.raises(ValueError, match="numbering 'sorted'"):
        build_chance(LEDUC, numbering="sorted")


# ------------------------------------------------------------------ exact game values


def test_classes_keep_the_game_values():
    kuhn = CFRPlusSolver(make_problem("kuhn.limit.2p"))
    kuhn.iterate(1000)
    r = exploitability(None, kuhn.average_strategy())
    assert r.value == pytest.approx(-1 / 18, abs=1e-5) and r.exploitability < 1e-3
    problem = make_problem("leduc.limit.2p")
    leduc = CFRPlusSolver(problem)
    leduc.iterate(2000)
    s = leduc.average_strategy()
    r = exploitability(None, s)
    assert r.value == pytest.approx(-0.0856, abs=5e-4) and r.exploitability < 1e-4
    # the responder over classes does as well as the one that sees the cards
    assert abstract_exploitability(None, s).br == pytest.approx(r.br, abs=1e-12)


def test_classes_follow_the_raw_trajectory():
    """From the uniform start CFR+ over cards stays suit-symmetric, so over classes it
    makes the same strategies: early on (before rounding drifts) to 1e-9."""
    raw = CFRPlusSolver(raw_problem("leduc.limit.2p"))
    canon = CFRPlusSolver(make_problem("leduc.limit.2p"))
    assert raw.problem.size == 2 * canon.problem.size
    for _ in range(3):
        raw.iterate(10)
        canon.iterate(10)
        a = exploitability(None, raw.average_strategy())
        b = exploitability(None, canon.average_strategy())
        assert b.exploitability == pytest.approx(a.exploitability, abs=1e-9)
        assert b.value == pytest.approx(a.value, abs=1e-9)


# ------------------------------------------------------------------ files


def test_new_files_record_the_numbering():
    solver = CFRPlusSolver(make_problem("leduc.nolimit.2p", "1p,a"))
    solver.iterate(20)
    s = solver.average_strategy()
    f = loads_file(dumps(s, "f32"))
    assert f.cards == {"abstraction": "lossless", "numbering": "canonical", "buckets": [3, 15]}
    assert f.numbering == "canonical"
    assert bucket_fn(f)(1, parse_cards("Ks"), parse_cards("Qh")) == lossless_bucket(
        f.game, 1, parse_cards("Ks"), parse_cards("Qh")
    )
    cards = np.array([parse_cards("KsQh"), parse_cards("KhQs"), parse_cards("QsKh")], dtype=np.uint8)
    got = bucket_batch_fn(f)(1, cards)
    assert got[0] == got[1] != got[2]
    back = f.to_strategy()
    assert back.problem.chance.numbering == "canonical"
    assert exploitability(None, back).exploitability == pytest.approx(exploitability(None, s).exploitability, abs=1e-6)


@pytest.mark.parametrize("path", [V1_KUHN, V2_LEDUC], ids=["v1-kuhn", "v2-leduc"])
def test_old_raw_files_still_load_and_play(path, tmp_path):
    f = open_strategy(path)
    assert "numbering" not in f.cards and f.numbering == "raw"
    assert f.bucket_counts == list(raw_lossless_bucket_counts(f.game))
    s = f.to_strategy()
    assert s.problem.chance.numbering == "raw"
    # the figures measured before lossless buckets became classes
    want = {V1_KUHN: 0.0326870906683448, V2_LEDUC: 0.0915941483862553}[path]
    assert exploitability(None, s).exploitability == pytest.approx(want, abs=1e-12)
    # the player looks each hand up in the raw numbering: its row is the stored one
    pol = translated(f)
    game = f.game
    batch = bucket_batch_fn(f)
    for hole, board in list(_deals(game, game.num_rounds - 1))[:40]:
        street = game.num_rounds - 1
        b = raw_lossless_bucket(game, street, hole, board)
        assert pol.bucket(street, hole, board) == b
        assert int(batch(street, np.array([list(hole) + list(board)], dtype=np.uint8))[0]) == b
    # saved again, it keeps its numbering
    again = loads_file(dumps(s))
    assert again.numbering == "raw" and again.bucket_counts == f.bucket_counts
    assert exploitability(None, again.to_strategy()).exploitability == pytest.approx(want, abs=1e-2)


def test_old_files_show_their_numbering_in_inspect(capsys):
    from agent.cli import main

    assert main(["inspect", str(V2_LEDUC)]) == 0
    assert "lossless buckets 6/30 (raw (board, hand) numbering" in capsys.readouterr().out


def _rewrite_cards(data: bytes, cards: dict) -> bytes:
    """A format-3 file with its ``cards`` record replaced (checksum recomputed)."""
    import struct

    pre = struct.Struct("<8sIIQ32s")
    head_len = pre.unpack_from(data, 0)[3]
    doc = msgpack.unpackb(data[pre.size : pre.size + head_len], raw=False)
    first = min(a["offset"] for a in doc["arrays"].values())
    body = data[first:]
    shift = 0
    while True:
        new = dict(doc, cards=cards, arrays={k: dict(v, offset=v["offset"] + shift) for k, v in doc["arrays"].items()},
                   end=doc["end"] + shift)
        head = msgpack.packb(new, use_bin_type=True)
        if pre.size + len(head) <= first + shift:
            break
        shift += ALIGN
    rest = head + bytes(first + shift - pre.size - len(head)) + body
    return pre.pack(MAGIC, 3, 0, len(head), hashlib.sha256(rest).digest()) + rest


def test_records_that_do_not_fit_are_refused_in_one_line():
    solver = CFRPlusSolver(make_problem("leduc.limit.2p"))
    data = dumps(solver.average_strategy())
    for cards, why in (
        ({"abstraction": "lossless", "numbering": "sorted", "buckets": [3, 15]}, "numbering 'sorted' is not one of"),
        ({"abstraction": "lossless", "numbering": "canonical", "buckets": [6, 30]}, "not the canonical lossless counts"),
        ({"abstraction": "lossless", "buckets": [3, 15]}, "not the raw lossless counts"),
    ):
        with pytest.raises(StrategyFileError) as exc:
            loads(_rewrite_cards(data, cards), "x.strategy")
        msg = str(exc.value)
        assert "\n" not in msg and msg.startswith("x.strategy: ") and why in msg, msg


def test_old_checkpoints_are_refused(tmp_path):
    old = CFRPlusSolver(raw_problem("leduc.limit.2p"))
    old.iterate(3)
    path = tmp_path / "old.ckpt"
    save_checkpoint(path, old)
    ckpt = load_checkpoint(path)
    assert ckpt.cards == {"abstraction": "lossless", "buckets": [6, 30]}
    with pytest.raises(CheckpointError) as exc:
        ckpt.problem()
    msg = str(exc.value)
    assert "\n" not in msg and "train again without --resume" in msg, msg
    with pytest.raises(CheckpointError):  # the table does not fit a run over classes
        restore_checkpoint(CFRPlusSolver(make_problem("leduc.limit.2p")), ckpt)
    # a checkpoint over classes resumes
    new = CFRPlusSolver(make_problem("leduc.limit.2p"))
    new.iterate(3)
    save_checkpoint(path, new)
    ckpt = load_checkpoint(path)
    assert ckpt.cards["numbering"] == "canonical"
    fresh = CFRPlusSolver(ckpt.problem())
    restore_checkpoint(fresh, ckpt)
    np.testing.assert_array_equal(fresh.regrets, new.regrets)
