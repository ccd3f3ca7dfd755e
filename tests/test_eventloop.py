"""``agent.eventloop.busy_read``: polling a socket before sleeping."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from agent.eventloop import CAN_POLL, busy_read

pytestmark = pytest.mark.skipif(not CAN_POLL, reason="polling needs POSIX descriptors")


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    a.setblocking(False)
    b.setblocking(False)
    yield a, b
    a.close()
    b.close()


def test_data_already_there_is_returned_at_once(pair):
    a, b = pair
    b.sendall(b"MATCHSTATE:0:0::Ks|\r\n")
    assert busy_read(a.fileno(), 1.0) == b"MATCHSTATE:0:0::Ks|\r\n"


def test_nothing_comes_within_the_budget(pair):
    a, _ = pair
    t0 = time.perf_counter()
    assert busy_read(a.fileno(), 0.002) is None
    assert time.perf_counter() - t0 >= 0.002
    assert busy_read(a.fileno(), 0.0) is None  # no budget: no read at all


def test_data_arriving_while_polling_is_caught(pair):
    a, b = pair
    timer = threading.Timer(0.01, lambda: b.sendall(b"late\n"))
    timer.start()
    try:
        assert busy_read(a.fileno(), 5.0) == b"late\n"
    finally:
        timer.join()


def test_end_of_file_and_a_bad_descriptor(pair):
    a, b = pair
    b.shutdown(socket.SHUT_WR)
    assert busy_read(a.fileno(), 1.0) == b""  # end of file is data too: the loop sees it again
    assert busy_read(a.fileno(), 1.0) == b""
    fd = socket.socket().detach()
    socket.close(fd)
    assert busy_read(fd, 0.01) is None  # a failed read is left to the event loop
