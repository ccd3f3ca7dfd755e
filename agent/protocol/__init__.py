"""ACPC protocol 2.0.0 without I/O: the wire format and both ends of a connection.

Nothing here touches a socket, a clock or asyncio (the h11 pattern): bytes go in, events
and bytes to send come out, and the caller passes in the time where time matters.

- :mod:`~agent.protocol.codec`: line framing (:class:`~agent.protocol.codec.LineBuffer`),
  the errors (:class:`~agent.protocol.codec.LocalProtocolError`: this side broke a rule,
  :class:`~agent.protocol.codec.RemoteProtocolError`: the peer did), the MATCHSTATE codec
  (:class:`~agent.protocol.codec.MatchState`, ``parse_match_state``,
  ``format_match_state``), responses and actions (``parse_response``, ``parse_action``,
  ``parse_version``, ``format_response``), ``legalize`` and ``hand_values``;
- :mod:`~agent.protocol.client_state`: the client's connection state machine
  (:class:`~agent.protocol.client_state.ClientConnection` and its events), wrapped by
  :mod:`agent.client`;
- :mod:`~agent.protocol.dealer_state`: the dealer's match state machine
  (:class:`~agent.protocol.dealer_state.DealerMatch`, ``TimeLimits``, the outputs
  ``Send``, ``Diagnostic``, ``LogLine``, ``MatchOver``, and the lenient reader of a
  client's echoed state), wrapped by :mod:`agent.dealer`.

Betting strings are read by :func:`poker.betting.read_betting` on both sides (strictly in
the dealer's messages, leniently in a client's echo). Before this package the three
modules were one, ``agent/protocol.py``; import from the modules, not from here.
"""
