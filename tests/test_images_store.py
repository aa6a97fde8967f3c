"""ImageStore (content-addressed, atomic writes) and its append-only URL index."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from conftest import FIXTURE_CHARTS

from zuhyo.errors import ImageError
from zuhyo.images.fetch import cached_path_for_url
from zuhyo.images.load import read_image_bytes
from zuhyo.images.store import ImageStore, UrlIndex, sniff_image_suffix, sniff_image_type
from zuhyo.schema import ImageRef


def chart(name: str = "late_night_viewers.png") -> bytes:
    return (FIXTURE_CHARTS / name).read_bytes()


def test_put_layout_idempotence_and_lookup(tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "s")
    data = chart()
    sha = hashlib.sha256(data).hexdigest()
    got_sha, path = store.put(data)
    assert got_sha == sha
    assert path == tmp_path / "s" / sha[:2] / f"{sha[2:]}.png"
    assert path.read_bytes() == data
    assert store.has(sha) and store.verify(sha) and store.path_for(sha) == path
    mtime = path.stat().st_mtime_ns
    assert store.put(data) == (sha, path) and path.stat().st_mtime_ns == mtime  # not rewritten
    assert store.put(b"GIF89a-not-really", suffix=".gif")[1].suffix == ".gif"
    other = store.put(chart("energy_mix.png"))[0]
    assert sorted(s for s, _ in store) == sorted([sha, other, hashlib.sha256(b"GIF89a-not-really").hexdigest()])
    assert not list((tmp_path / "s").rglob(".tmp-*"))


def test_unknown_sha_and_bad_keys(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    missing = "0" * 64
    assert store.path_for(missing) is None and not store.has(missing) and not store.verify(missing)
    for bad in ("abc", "A" * 64, "../" + "0" * 61):
        with pytest.raises(ValueError, match="not a lowercase hex SHA-256"):
            store.path_for(bad)


def test_corrupted_copy_is_detected_and_replaced(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    data = chart()
    sha, path = store.put(data)
    path.write_bytes(data[:100])
    assert store.has(sha) and not store.verify(sha)
    assert store.put(data) == (sha, path)
    assert path.read_bytes() == data and store.verify(sha)


def test_failed_write_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ImageStore(tmp_path)

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space left"):
        store.put(chart())
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_sniffing() -> None:
    assert sniff_image_type(chart()) == (".png", "image/png")
    assert sniff_image_type(b"II*\x00rest") == (".tif", "image/tiff")
    assert sniff_image_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == (".webp", "image/webp")
    assert sniff_image_suffix(b"<html>") == ".bin"


def test_index_latest_record_wins_and_survives_reload(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    sha, _ = store.put(chart())
    store.index.append("http://127.0.0.1/a.png", "failed", message="HTTP 503")
    store.index.append("http://127.0.0.1/a.png", "ok", sha256=sha, width=312, height=366)
    store.index.append("http://127.0.0.1/b.png", "failed", message="HTTP 404 Not Found")
    for index in (store.index, UrlIndex(tmp_path / "index.jsonl")):
        a, b = index.get("http://127.0.0.1/a.png"), index.get("http://127.0.0.1/b.png")
        assert a is not None and (a.status, a.sha256, a.extra) == ("ok", sha, {"width": 312, "height": 366})
        assert b is not None and (b.status, b.message) == ("failed", "HTTP 404 Not Found")
        assert index.get("http://127.0.0.1/c.png") is None
    lines = (tmp_path / "index.jsonl").read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[1])["status"] == "ok"  # append-only: history kept


def test_index_sees_appends_from_another_writer(tmp_path: Path) -> None:
    mine, theirs = UrlIndex(tmp_path / "index.jsonl"), UrlIndex(tmp_path / "index.jsonl")
    assert mine.get("u1") is None
    theirs.append("u1", "failed", message="timeout")
    rec = mine.get("u1")
    assert rec is not None and rec.message == "timeout"


def test_index_tolerates_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "index.jsonl"
    sha = "ab" * 32
    path.write_text(json.dumps({"url": "u1", "status": "ok", "sha256": sha}) + "\n" + '{"url": "u2", "sta')
    index = UrlIndex(path)
    assert index.get("u1") is not None and index.get("u2") is None and index.bad_lines == [2]
    index.append("u3", "ok", sha256=sha)  # must start on a fresh line, not glue onto the torn one
    fresh = UrlIndex(path)
    rec = fresh.get("u3")
    assert rec is not None and rec.sha256 == sha and fresh.bad_lines == [2]


def test_index_rejects_bad_records(tmp_path: Path) -> None:
    index = UrlIndex(tmp_path / "index.jsonl")
    with pytest.raises(ValueError, match="status"):
        index.append("u", "done")
    with pytest.raises(ValueError, match="SHA-256"):
        index.append("u", "ok")
    assert not (tmp_path / "index.jsonl").exists()


def test_cached_path_for_url_and_read_image_bytes(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/figure.png"
    nowhere = tmp_path / "not-created"
    assert cached_path_for_url(nowhere, url) is None and not nowhere.exists()
    store = ImageStore(tmp_path / "cache")
    ref = ImageRef(url=url)
    with pytest.raises(ImageError, match="not fetched yet; run `zuhyo images fetch` first"):
        read_image_bytes(ref, None, cache_dir=store.root)
    store.index.append(url, "failed", message="HTTP 404 Not Found")
    assert cached_path_for_url(store.root, url) is None
    sha, path = store.put(chart())
    store.index.append(url, "ok", sha256=sha)
    assert cached_path_for_url(store.root, url) == path
    assert read_image_bytes(ref, None, cache_dir=store.root) == chart()
    path.unlink()
    assert cached_path_for_url(store.root, url) is None
