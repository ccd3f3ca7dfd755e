"""MQTT telemetry against a real mosquitto broker: what arrives, and that play never waits."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time

import aiomqtt
import pytest

from agent.telemetry import MqttConfig, Telemetry, topic_for
from tests.mqtt_broker import Broker, free_port


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path)
    b.start()
    yield b
    b.kill()


async def collect(port: int, topic: str, until, timeout: float = 10.0) -> list[tuple[str, dict, bool]]:
    """Subscribe and gather (topic, payload, retain) until ``until(messages)`` holds."""
    got: list[tuple[str, dict, bool]] = []
    async with aiomqtt.Client("127.0.0.1", port) as sub:
        await sub.subscribe(topic, qos=1)
        async with asyncio.timeout(timeout):
            async for msg in sub.messages:
                got.append((str(msg.topic), json.loads(msg.payload), bool(msg.retain)))
                if until(got):
                    break
    return got


def test_config_parse():
    assert MqttConfig.parse("localhost").port == 1883
    c = MqttConfig.parse("10.0.0.1:1884", username="u")
    assert (c.host, c.port, c.username) == ("10.0.0.1", 1884, "u")
    assert MqttConfig.parse("[::1]:9").host == "::1"
    assert MqttConfig.parse("h", tls=True).port == 8883
    with pytest.raises(ValueError, match="port 70000"):
        MqttConfig.parse("h:70000")
    assert topic_for(c, "my bot/+#", "hand") == "pokerbot/my_bot___/hand"


@pytest.mark.needs_broker
def test_hands_status_and_score_arrive(broker):
    async def main():
        cfg = MqttConfig.parse(f"127.0.0.1:{broker.port}")
        listener = asyncio.create_task(
            collect(broker.port, "pokerbot/alice/#",
                    lambda got: sum(t.endswith("/hand") for t, _, _ in got) == 3
                    and any(p.get("state") == "finished" for _, p, _ in got))
        )
        await asyncio.sleep(0.3)  # let the subscriber subscribe
        async with Telemetry(cfg, "alice") as tel:
            for h, chips in enumerate([100, -50, 25]):
                tel.publish_hand({"hand": h, "betting": "cc/cc/cc/cc"}, chips, big_blind=100)
        return await listener, tel

    got, tel = asyncio.run(main())
    hands = [p for t, p, _ in got if t == "pokerbot/alice/hand"]
    assert [h["hand"] for h in hands] == [0, 1, 2]
    assert [h["chips"] for h in hands] == [100, -50, 25]
    scores = [p for t, p, _ in got if t == "pokerbot/alice/score"]
    assert scores[-1]["hands"] == 3 and scores[-1]["chips"] == 75
    assert scores[-1]["mbb_per_game"] == pytest.approx(1000 * 75 / 300)
    states = [p["state"] for t, p, _ in got if t == "pokerbot/alice/status"]
    assert states[0] == "online" and states[-1] == "finished"
    assert tel.dropped == 0 and tel.sent >= 8


@pytest.mark.needs_broker
def test_status_is_retained_for_late_subscribers(broker):
    async def main():
        async with Telemetry(MqttConfig.parse(f"127.0.0.1:{broker.port}"), "bob"):
            pass
        return await collect(broker.port, "pokerbot/bob/status", lambda got: True)

    (topic, payload, retain), = asyncio.run(main())
    assert retain and payload["state"] == "finished"


def test_broker_down_never_blocks_and_drops_oldest(tmp_path):
    port = free_port()  # nothing listens here

    async def main():
        cfg = MqttConfig(host="127.0.0.1", port=port, queue_size=5)
        tel = Telemetry(cfg, "carol")
        await tel.__aenter__()
        t0 = time.perf_counter()
        for h in range(100):
            tel.publish_hand({"hand": h}, 1, big_blind=2)
        elapsed = time.perf_counter() - t0
        await asyncio.sleep(0.3)
        await tel.close(timeout=0.5)
        return tel, elapsed

    tel, elapsed = asyncio.run(main())
    # 100 hands = 200 messages + 1 status into a queue of 5: the rest were dropped, at once.
    assert tel.dropped == 201 - 5 + 1  # the 'finished' status pushes one more out
    assert tel.sent == 0
    assert elapsed < 1.0


@pytest.mark.needs_broker
def test_broker_killed_mid_match_then_back(tmp_path):
    broker = Broker(tmp_path)
    broker.start()

    async def main():
        cfg = MqttConfig(host="127.0.0.1", port=broker.port, max_backoff_s=0.3)
        async with Telemetry(cfg, "dave") as tel:
            for h in range(5):
                tel.publish_hand({"hand": h}, 1, big_blind=2)
            for _ in range(100):
                if not tel._queue:
                    break
                await asyncio.sleep(0.05)
            broker.kill()
            # Play goes on while the broker is dead: publishing never blocks or raises.
            for h in range(5, 10):
                tel.publish_hand({"hand": h}, 1, big_blind=2)
                await asyncio.sleep(0.05)
            await asyncio.to_thread(broker.start)
            listener = asyncio.create_task(
                collect(broker.port, "pokerbot/dave/hand", lambda got: got[-1][1]["hand"] == 14)
            )
            await asyncio.sleep(0.3)
            for h in range(10, 15):
                tel.publish_hand({"hand": h}, 1, big_blind=2)
            got = await listener
        return got

    try:
        got = asyncio.run(main())
    finally:
        broker.kill()
    # After the restart every later hand arrives, in order.
    numbers = [p["hand"] for _, p, _ in got]
    assert numbers[-5:] == [10, 11, 12, 13, 14]
    assert numbers == sorted(numbers)


@pytest.mark.needs_broker
def test_last_will_marks_a_vanished_bot_offline(broker, tmp_path):
    script = tmp_path / "bot.py"
    script.write_text(textwrap.dedent(f"""
        import asyncio, sys
        sys.path.insert(0, {str(__import__('pathlib').Path(__file__).resolve().parents[1])!r})
        from agent.telemetry import MqttConfig, Telemetry
        async def main():
            tel = Telemetry(MqttConfig(host="127.0.0.1", port={broker.port}), "erin")
            await tel.__aenter__()
            while not tel.connected or tel._queue:
                await asyncio.sleep(0.02)
            print("up", flush=True)
            await asyncio.sleep(60)
        asyncio.run(main())
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "up"
        proc.kill()  # no clean disconnect: the broker must send the will
        proc.wait()
        got = asyncio.run(
            collect(broker.port, "pokerbot/erin/status",
                    lambda got: got[-1][1]["state"] == "offline", timeout=30)
        )
    finally:
        proc.kill()
    assert got[-1][1] == {"state": "offline", "bot": "erin"}


def test_lost_broker_leftovers_are_not_printed_twice():
    """What the MQTT client leaves behind when the broker vanishes is already warned
    about by the drain task; anything else still reaches the previous handler."""
    import aiomqtt

    from agent.telemetry import _quiet_lost_broker

    seen = []
    handler = _quiet_lost_broker(lambda loop, ctx: seen.append(ctx["message"]))
    loop = asyncio.new_event_loop()
    try:
        handler(loop, {"message": "never retrieved", "exception": aiomqtt.MqttError("gone")})
        handler(loop, {"message": "cb", "exception": OSError(9, "Bad file descriptor"),
                       "handle": "<Handle Loop.add_writer(14, ...)>"})
        handler(loop, {"message": "other", "exception": OSError(9, "Bad file descriptor"),
                       "handle": "<Handle something_else()>"})
        handler(loop, {"message": "bug", "exception": ValueError("x")})
    finally:
        loop.close()
    assert seen == ["other", "bug"]
