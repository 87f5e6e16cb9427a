"""The cassette format and files: version, stable order, check and show, torn and bad records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mockserver.cassettes import files
from mockserver.cassettes.format import Event, Record, RecordedRequest, RecordedResponse, decode, encode
from mockserver.cassettes.sse import EventCutter
from mockserver.cli import main


def _record(n: int = 1, *, stream: bool = True) -> Record:
    events = (
        [Event(ms=100.0 + i, event=None, data=json.dumps({"choices": [{"delta": {"content": "x"}}]})) for i in range(3)]
        if stream
        else []
    )
    return Record(
        version=1,
        id=f"rec_{n}",
        recorded_at="2026-12-01T15:00:00.000000Z",
        api="chat.completions",
        request=RecordedRequest(
            method="POST", path="/v1/chat/completions", body={"model": "gpt-5.6-sol", "b": 1, "a": 2}
        ),
        response=RecordedResponse(
            status=200,
            headers={"content-type": "text/event-stream"},
            stream=stream,
            headers_ms=5,
            duration_ms=120,
            events=events,
            body=None if stream else {"usage": {"completion_tokens": 3}},
        ),
    )


def test_a_record_is_one_line_with_version_first_and_a_fixed_key_order() -> None:
    line = encode(_record())
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    data = json.loads(line)
    assert list(data) == ["version", "id", "recorded_at", "api", "request", "response"]
    assert list(data["response"])[:3] == ["status", "headers", "stream"]
    assert encode(decode(line)) == line  # what is read back writes back the same: clean diffs


def test_check_names_the_file_line_and_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.jsonl"
    bad = json.loads(encode(_record()))
    bad["response"]["events"][1]["ms"] = 50  # goes back in time
    path.write_bytes(encode(_record()) + json.dumps(bad).encode() + b"\n" + b'{"version": 2}\n')
    assert main(["cassette", "check", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"mockserver: {path}:2: response: Value error, events are not in the order of their offsets (ms)"
    assert err[1] == f"mockserver: {path}:3: version is 2; this mockserver reads cassette version 1"
    with pytest.raises(files.CassetteError, match=rf"^{path}:2: response"):
        files.load(path)


def test_check_and_show_a_good_cassette(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(encode(_record(1)) + encode(_record(2, stream=False)))
    assert main(["cassette", "check", str(path)]) == 0
    assert "2 records, all valid" in capsys.readouterr().out
    assert main(["cassette", "show", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "#",
        "path",
        "model",
        "tier",
        "stream",
        "status",
        "tokens",
        "TTFT",
        "ms",
        "duration",
        "ms",
    ]
    assert lines[1].split() == [
        "1",
        "POST",
        "/v1/chat/completions",
        "gpt-5.6-sol",
        "default",
        "yes",
        "200",
        "-",
        "100",
        "120",
    ]
    assert lines[2].split() == [
        "2",
        "POST",
        "/v1/chat/completions",
        "gpt-5.6-sol",
        "default",
        "no",
        "200",
        "3",
        "-",
        "120",
    ]


def test_a_torn_last_record_is_dropped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    line = encode(_record())
    path.write_bytes(line + line[:40])
    with pytest.warns(files.TornRecordWarning, match=r"c.jsonl:2: the last record is incomplete"):
        cassette = files.load(path)
    assert len(cassette.records) == 1 and cassette.lines == [1]
    writer = files.CassetteWriter(path)
    with pytest.warns(files.TornRecordWarning):
        writer.append(_record(2))
    assert path.read_bytes() == line + encode(_record(2))


def test_the_event_cutter_takes_any_framing() -> None:
    cutter = EventCutter()
    stream = b": hi\r\n\r\nevent: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata: x\n\ndata: y\r"
    for i in range(0, len(stream), 3):  # three bytes at a time: every boundary falls somewhere odd
        cutter.feed(stream[i : i + 3], float(i))
    cutter.feed(b"\ndata: z", 99.0)  # the "\r" then "\n" is one line end: y and z are one event
    cutter.close(100.0)
    assert [(e.event, e.data) for e in cutter.events] == [("a", "1\n2"), (None, "x"), (None, "y\nz")]
    assert cutter.events[-1].ms == 100.0


def test_serve_refuses_a_cassette_that_does_not_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(encode(_record()) + b'{"version": 1, "id": "x"}\n')
    assert main(["serve", "--replay", str(bad), "--port", "0", "--quiet"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"mockserver: replay: {bad}:2: ")


def test_a_device_or_an_oversized_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    with pytest.raises(files.CassetteError, match="/dev/zero: not a regular file"):
        files.load("/dev/zero")  # would never end
    big = tmp_path / "big.jsonl"
    big.write_bytes(encode(_record()) * 3)
    with pytest.raises(files.CassetteError, match=r"past the bound of 100 \(--max-cassette-bytes\)"):
        files.load(big, max_bytes=100)
    assert files.check("/dev/zero") == ["/dev/zero: not a regular file"]
