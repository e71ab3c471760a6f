"""The shared HTTP transport against servers that misbehave, each bounded in time.

Servers run on 127.0.0.1 (``servers.Hostile``); every test finishes whatever the server
does (the timeout marker is the hang guard; no test times itself): a drip is cut at the
total deadline, read on a fake clock (``clocks.FakeClock``), an endless body at
the byte bound, a gzip bomb at the decoded bound with bounded memory, a redirect
loop after 5 hops. The chat client never lets the API key out: not in errors, not
in a 200 reply that echoes the Authorization header, not in a summary.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest
from builders import session
from clocks import FakeClock
from servers import BOMB_BYTES, Hostile, chat_reply

from nanohermes_nb import OpenAICompatibleSummarizer, compact
from nanohermes_nb.agent import transport as tp
from nanohermes_nb.agent.chat import ChatClient, Scrubber, check_api_key
from nanohermes_nb.agent.transport import (
    AddressRefused,
    APIKeyError,
    HTTPStatusError,
    MalformedReply,
    RedirectRefused,
    TransportTimeout,
    fetch,
    is_public_address,
)
from nanohermes_nb.context.compaction import PLACEHOLDER_NOTE
from nanohermes_nb.context.summarizers import SummarizerError

pytestmark = pytest.mark.timeout(30)

KEY = "sk-test/SECRET+key=0123456789"  # '/', '+' and '=' change under URL and JSON escaping
MiB = 1 << 20


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server():
    s = Hostile(drip_every=0.02)  # the drips' pace on the fake clock is its tick, not this
    yield s
    s.close()


def _outcome(call):
    try:
        return call()
    except Exception as exc:  # noqa: BLE001
        return exc


# ---------------------------------------------------------------- deadline, size, decoding


HEAD = len(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\n")


def test_slow_drip_body_is_cut_at_the_total_deadline(server: Hostile) -> None:
    clock = FakeClock(tick=0.1)  # each reading of the deadline costs 0.1 s: every byte received reads it
    start = clock.now
    error = _outcome(lambda: fetch("GET", f"{server.url}/drip", timeout=1.5, max_bytes=MiB, clock=clock))
    assert isinstance(error, TransportTimeout) and str(error) == "timed out after 1.5 s"
    # cut while the body was dripping, at the total deadline: a byte arriving never resets the clock
    assert server.sent["/drip"] > HEAD and clock.now - start >= 1.5
    assert clock.readings <= 1.5 / 0.1 + 2


def test_slow_drip_headers_are_cut_at_the_total_deadline(server: Hostile) -> None:
    clock = FakeClock(tick=0.1)
    start = clock.now
    error = _outcome(lambda: fetch("GET", f"{server.url}/drip-headers", timeout=1.2, max_bytes=MiB, clock=clock))
    assert isinstance(error, TransportTimeout) and str(error) == "timed out after 1.2 s"
    assert server.sent["/drip-headers"] > len(b"HTTP/1.1 200 OK\r\n") and clock.now - start >= 1.2


def test_endless_body_stops_at_the_bound(server: Hostile) -> None:
    reply = fetch("GET", f"{server.url}/endless", timeout=10, max_bytes=MiB)
    assert reply.truncated and len(reply.body) == MiB and reply.body == b"a" * MiB
    assert server.finished("/endless").wait(20)  # the server noticed the client hang up ...
    assert server.sent["/endless"] < 20 * MiB  # ... far from the 30 s stream


def test_gzip_bomb_is_bounded_while_streaming(server: Hostile) -> None:
    fetch("GET", f"{server.url}/text", timeout=10, max_bytes=MiB)  # warm up imports and the pool
    tracemalloc.start()
    try:
        reply = fetch("GET", f"{server.url}/bomb", timeout=20, max_bytes=2 * MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reply.truncated and reply.body == bytes(2 * MiB)
    assert peak < 8 * MiB, f"peak {peak / MiB:.1f} MiB for a {BOMB_BYTES // MiB} MiB bomb"


def test_deflate_and_gzip_bodies_are_decoded(server: Hostile) -> None:
    assert fetch("GET", f"{server.url}/deflate", timeout=5, max_bytes=MiB).body == b"deflated text " * 100
    reply = fetch("GET", f"{server.url}/nul-gzip", timeout=5, max_bytes=MiB)
    assert reply.body.startswith(b"hello\x00") and not reply.truncated


# ---------------------------------------------------------------- redirects and addresses


def test_redirect_loop_stops_after_five_hops(server: Hostile) -> None:
    error = _outcome(lambda: fetch("GET", f"{server.url}/loop", timeout=10, max_bytes=MiB))
    assert isinstance(error, RedirectRefused) and "more than 5 redirects" in str(error)
    assert server.hits["/loop"] == 6


def test_redirect_to_another_port_is_followed_by_default_and_refused_for_the_api(server: Hostile) -> None:
    other = Hostile()
    try:
        reply = fetch("GET", f"{server.url}/to?{other.url}/text", timeout=5, max_bytes=MiB)
        assert reply.status == 200 and reply.body == f"plain text from {other.url}".encode()
        assert reply.url == f"{other.url}/text"
        with pytest.raises(RedirectRefused, match="another origin"):
            fetch("GET", f"{server.url}/to?{other.url}/text", timeout=5, max_bytes=MiB, same_origin_redirects=True)
    finally:
        other.close()


def test_redirect_to_a_non_http_url_is_refused(server: Hostile) -> None:
    for target in ("file:///etc/passwd", "ftp://example.com/x", "gopher://x/"):
        with pytest.raises(RedirectRefused, match="only http"):
            fetch("GET", f"{server.url}/to?{target}", timeout=5, max_bytes=MiB)


def test_private_addresses_refused_only_when_asked(server: Hostile) -> None:
    assert fetch("GET", f"{server.url}/text", timeout=5, max_bytes=MiB).status == 200  # off by default
    for url in (f"{server.url}/text", server.url.replace("127.0.0.1", "localhost") + "/text"):
        with pytest.raises(AddressRefused, match="loopback, private or link-local"):
            fetch("GET", url, timeout=5, max_bytes=MiB, refuse_private_addresses=True)
    assert "/text" not in server.hits or server.hits["/text"] == 1  # the refused requests never arrived


def test_every_redirect_hop_is_checked_after_resolution(server: Hostile, monkeypatch: pytest.MonkeyPatch) -> None:
    """127.0.0.1 counts as public here, 127.0.0.2 as private: the first hop passes, the second is refused."""
    second = Hostile("127.0.0.2")
    try:
        monkeypatch.setattr(tp, "is_public_address", lambda ip: ip != "127.0.0.2")
        assert fetch("GET", f"{server.url}/text", timeout=5, max_bytes=MiB, refuse_private_addresses=True).status == 200
        with pytest.raises(AddressRefused, match="127.0.0.2"):
            fetch("GET", f"{server.url}/to?{second.url}/text", timeout=5, max_bytes=MiB,
                  refuse_private_addresses=True)
        assert server.hits["/to"] == 1 and "/text" not in second.hits
    finally:
        second.close()


@pytest.mark.parametrize("ip, public", [
    ("8.8.8.8", True), ("2606:4700:4700::1111", True), ("127.0.0.1", False), ("10.1.2.3", False),
    ("172.16.0.1", False), ("192.168.1.1", False), ("169.254.169.254", False), ("100.64.0.1", False),
    ("0.0.0.0", False), ("::1", False), ("fe80::1%eth0", False), ("fc00::1", False), ("::ffff:127.0.0.1", False),
    ("::ffff:8.8.8.8", True), ("64:ff9b::a00:1", False), ("224.0.0.1", False), ("ff02::1", False),
])
def test_is_public_address(ip: str, public: bool) -> None:
    assert is_public_address(ip) is public


# ---------------------------------------------------------------- the API key


@pytest.mark.parametrize("bad, what", [
    ("sk-abc\r\nX-Injected: 1", "a carriage return (CR)"), ("sk-abc\ndef", "a line feed (LF)"),
    ("sk-\u00e9t\u00e9", "a non-ASCII character"), ("sk abc", "a space"), ("sk-\x00abc", "a control character"),
])
def test_a_key_that_cannot_be_sent_is_refused_without_showing_it(bad: str, what: str) -> None:
    with pytest.raises(APIKeyError) as err:
        ChatClient("http://127.0.0.1:9/v1", bad)
    assert what in str(err.value) and "abc" not in str(err.value) and "\u00e9" not in str(err.value)
    with pytest.raises(SummarizerError) as err:
        OpenAICompatibleSummarizer("http://127.0.0.1:9/v1", bad)
    assert what in str(err.value) and "abc" not in str(err.value)


def test_surrounding_whitespace_of_a_key_is_stripped(server: Hostile) -> None:
    assert check_api_key("  sk-file-key\n") == "sk-file-key" and check_api_key(None) == "" and check_api_key(" ") == ""
    server.script = [(200, {}, chat_reply("ok"))]
    ChatClient(server.url + "/v1", "sk-file-key\r\n").post({"model": "m", "messages": []})
    assert server.requests[0]["auth"] == "Bearer sk-file-key"


def test_scrubber_covers_every_form() -> None:
    scrub = Scrubber(KEY)
    forms = [KEY, json.dumps(KEY)[1:-1], KEY.replace("/", "\\/"), "sk-test%2FSECRET%2Bkey%3D0123456789",
             "sk-test%2fSECRET%2bkey%3d0123456789", "sk-test%2FSECRET%2Bkey%3D0123456789".replace("%2B", "+"),
             f"Authorization: Bearer {KEY}"]
    for form in forms:
        assert "SECRET" not in scrub(form), form
    nested = scrub.json({"a": [f"x {KEY} y", {KEY: 1}], "b": 2})
    assert nested == {"a": ["x *** y", {"***": 1}], "b": 2}


def test_a_server_echoing_the_key_in_a_200_reply_never_gets_it_into_the_summary(server: Hostile) -> None:
    server.script = [(200, {}, chat_reply("Goal: fix it. Echo {auth} / {auth_json} / {auth_url} / {auth_u}."))]
    llm = OpenAICompatibleSummarizer(server.url + "/v1", KEY, "m")
    result = compact(session(10), budget=1000, summarizer=llm)
    assert server.requests[0]["auth"] == f"Bearer {KEY}"  # the key was sent ...
    text = json.dumps(result.messages) + (result.note or "") + json.dumps(llm.failures)
    assert "SECRET" not in text and "Goal: fix it." in result.note  # ... and came back nowhere
    assert result.note.count("***") == 4


def test_a_server_echoing_the_key_in_an_error_never_gets_it_into_the_reason(server: Hostile) -> None:
    server.script = [(401, {}, '{"error": "bad key {auth} {auth_json} {auth_url}"}')]
    llm = OpenAICompatibleSummarizer(server.url + "/v1", KEY, "m")
    result = compact(session(10), budget=1000, summarizer=llm)
    assert result.note == PLACEHOLDER_NOTE and "HTTP 401" in result.failure
    assert "SECRET" not in result.failure and "SECRET" not in repr(llm) and "SECRET" not in json.dumps(llm.failures)


# ---------------------------------------------------------------- retries and replies


def test_429_then_success_honours_retry_after(server: Hostile) -> None:
    server.script = [(429, {"Retry-After": "1"}, '{"error": "slow down"}'), (200, {}, chat_reply("fine"))]
    clock = FakeClock()
    client = ChatClient(server.url + "/v1", KEY, max_tries=3, clock=clock, sleep=clock.sleep)
    reply = client.post({"model": "m", "messages": []})
    assert reply["choices"][0]["message"]["content"] == "fine"
    assert len(server.requests) == 2 and clock.sleeps == [1.0]  # waited the second asked for, once


def test_without_retry_after_the_waits_double(server: Hostile) -> None:
    server.script = [(503, {}, "busy"), (503, {}, "busy"), (200, {}, chat_reply("fine"))]
    clock = FakeClock()
    reply = ChatClient(server.url + "/v1", KEY, max_tries=3, clock=clock, sleep=clock.sleep).post({})
    assert reply["choices"][0]["message"]["content"] == "fine" and clock.sleeps == [0.5, 1.0]


def test_the_summarizer_sends_one_request_by_default(server: Hostile) -> None:
    server.script = [(429, {"Retry-After": "1"}, '{"error": "slow down"}'), (200, {}, chat_reply("fine"))]
    clock = FakeClock()
    with pytest.raises(SummarizerError, match=r"HTTP 429 .*\(Retry-After: 1\)"):
        OpenAICompatibleSummarizer(server.url + "/v1", KEY, "m", clock=clock, sleep=clock.sleep)("user: x\n")
    assert len(server.requests) == 1 and clock.sleeps == []
    server.script = [(429, {"Retry-After": "1"}, '{"error": "slow down"}'), (200, {}, chat_reply("fine"))]
    retried = OpenAICompatibleSummarizer(server.url + "/v1", KEY, "m", max_tries=2, clock=clock, sleep=clock.sleep)
    assert retried("user: x\n") == "fine" and clock.sleeps == [1.0]


def test_a_retry_after_beyond_the_cap_is_not_waited_for(server: Hostile) -> None:
    server.script = [(503, {"Retry-After": "3600"}, "down for maintenance")]
    clock = FakeClock()
    error = _outcome(lambda: ChatClient(server.url + "/v1", KEY, max_tries=3, clock=clock, sleep=clock.sleep).post({}))
    assert isinstance(error, HTTPStatusError) and error.status == 503 and "Retry-After: 3600" in str(error)
    assert len(server.requests) == 1 and clock.sleeps == []


def test_repeated_503_gives_up_after_max_tries(server: Hostile) -> None:
    server.script = [(503, {"Retry-After": "0"}, "busy")]
    clock = FakeClock()
    with pytest.raises(HTTPStatusError):
        ChatClient(server.url + "/v1", KEY, max_tries=3, clock=clock, sleep=clock.sleep).post({})
    assert len(server.requests) == 3 and clock.sleeps == [0.0, 0.0]


def test_an_endless_chat_reply_is_refused_not_read_whole(server: Hostile) -> None:
    server.chat_mode = "endless"
    error = _outcome(lambda: ChatClient(server.url + "/v1", KEY, max_reply_bytes=MiB).post({}))
    assert isinstance(error, MalformedReply) and "reply larger than 1048576 bytes" in str(error)


def test_a_drip_fed_chat_reply_times_out_as_a_summarizer_failure(server: Hostile) -> None:
    server.chat_mode = "drip"
    clock = FakeClock(tick=0.1)
    llm = OpenAICompatibleSummarizer(server.url + "/v1", KEY, "m", timeout=1.0, clock=clock, sleep=clock.sleep)
    result = compact(session(10), budget=1000, summarizer=llm)
    assert result.note == PLACEHOLDER_NOTE and "timed out after 1 s" in result.failure
    assert clock.now - 1000.0 >= 1.0


def test_an_excerpt_with_a_lone_surrogate_is_still_sent(server: Hostile) -> None:
    server.script = [(200, {}, chat_reply("ok"))]
    assert OpenAICompatibleSummarizer(server.url + "/v1", KEY, "m")("user: \ud800 from a broken log\n") == "ok"
    assert server.requests[0]["body"]["messages"][1]["content"] == "user: \ud800 from a broken log\n"


def test_bad_urls_are_one_line_errors() -> None:
    for url in ("http://[::1", "not a url", ""):
        with pytest.raises(tp.TransportError) as err:
            fetch("GET", url, timeout=1, max_bytes=MiB)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="http"):
        ChatClient("ftp://example.com/v1")
