"""`hakusho` and `jgraphqa` adapters on rows built in the published HF shapes (embedded Image feature, image_url)."""

from __future__ import annotations

from pathlib import Path

import pytest
from datasets import Dataset, DatasetDict, Features, Image, Sequence, Value

from zuhyo.benchmarks import BENCHMARKS, BenchmarkSource, ensure_registered, load_benchmark
from zuhyo.benchmarks.hakusho import parse_enum, parse_flags
from zuhyo.errors import DataError
from zuhyo.schema import Flag, ImageType, TopicGroup

PNG = (Path(__file__).parent / "fixtures" / "adapters" / "bar_chart.png").read_bytes()
JPG = (Path(__file__).parent / "fixtures" / "adapters" / "bar_chart.jpg").read_bytes()


def _hakusho_embedded() -> Dataset:
    """HakushoBench @ 41de46f shape plus the optional metadata columns."""
    feats = Features({"question": Value("string"), "answer": Value("string"), "original_id": Value("string"),
                      "image": Image(), "white_paper": Value("string"), "topic_group": Value("string"),
                      "image_type": Value("string"), "flags": Sequence(Value("string"))})
    return Dataset.from_dict({
        "question": ["2022年の値はいくつですか。", "最も高い棒はどれですか。"],
        "answer": ["32", "2020年"],
        "original_id": ["hb-0001", "hb-0002"],
        "image": [{"bytes": PNG, "path": None}, {"bytes": JPG, "path": None}],
        "white_paper": ["情報通信白書", None],
        "topic_group": ["Energy and Environment", "economy"],
        "image_type": ["bar", "Table"],
        "flags": [["multi-hop", "Counting"], []],
    }, features=feats)


def _load(name: str, source: BenchmarkSource, strict: bool = False):
    return load_benchmark(name, source, strict=strict)


def _check_embedded(result) -> None:
    assert result.errors == [] and result.missing_images() == []
    a, b = result.samples
    assert (a.id, a.question, a.answers) == ("hb-0001", "2022年の値はいくつですか。", ["32"])
    assert a.image.data == PNG and a.image.mime == "image/png" and b.image.mime == "image/jpeg"
    assert a.image_type is ImageType.BAR and b.image_type is ImageType.TABLE
    assert a.flags == [Flag.MULTI_HOP, Flag.COUNTING] and b.flags == []
    assert a.hakusho.white_paper == "情報通信白書" and a.hakusho.topic_group is TopicGroup.ENERGY_ENVIRONMENT
    assert a.hakusho.original_id == "hb-0001" and b.hakusho.topic_group is TopicGroup.ECONOMY


def test_embedded_images_from_save_to_disk_folder(tmp_path: Path) -> None:
    DatasetDict({"test": _hakusho_embedded()}).save_to_disk(str(tmp_path / "disk"))
    result = _load("hakusho", BenchmarkSource(path=tmp_path / "disk"))
    _check_embedded(result)
    assert {s.split for s in result.samples} == {"test"}


def test_embedded_images_from_parquet_repo_folder_as_hf_id(tmp_path: Path) -> None:
    (tmp_path / "repo" / "data").mkdir(parents=True)
    _hakusho_embedded().to_parquet(str(tmp_path / "repo" / "data" / "test-00000-of-00001.parquet"))
    _check_embedded(_load("hakusho", BenchmarkSource(hf_id=str(tmp_path / "repo"), cache_dir=tmp_path / "c")))
    # The same parquet file read directly.
    _check_embedded(_load("hakusho", BenchmarkSource(path=tmp_path / "repo" / "data" /
                                                     "test-00000-of-00001.parquet")))


def test_image_url_revision_shape(tmp_path: Path) -> None:
    ds = Dataset.from_dict({"question": ["Q1", "Q2"], "answer": ["A1", "A2"], "original_id": ["u1", "u2"],
                            "image_url": ["https://www.soumu.go.jp/johotsusintokei/whitepaper/ja/r05/img/a.png",
                                          "https://www.mext.go.jp/fig/b.png"]})
    ds.to_parquet(str(tmp_path / "test.parquet"))
    result = _load("hakusho", BenchmarkSource(path=tmp_path / "test.parquet"))
    assert result.errors == []
    assert [s.image.url for s in result.samples] == list(ds["image_url"])
    assert all(s.image.data is None and s.image.path is None for s in result.samples)
    assert result.missing_images() == []  # URL-only images are fetched later, not missing


def test_jgraphqa_three_layouts(tmp_path: Path) -> None:
    img = Features({"image": Image(), "question": Value("string"), "answer": Value("string"), "id": Value("string")})
    train = Dataset.from_dict({"image": [{"bytes": PNG, "path": None}], "question": ["売上高は?"],
                               "answer": ["120億円"], "id": ["jg-1"]}, features=img)
    DatasetDict({"train": train}).save_to_disk(str(tmp_path / "jgraphqa"))
    # llm-jp/JGraphQA has only a train split: with no --split it is the only split and is used.
    r = _load("jgraphqa", BenchmarkSource(path=tmp_path / "jgraphqa"))
    assert [(s.id, s.split, s.answer) for s in r.samples] == [("jg-1", "train", "120億円")]
    assert r.samples[0].hakusho is None and r.samples[0].metadata["id_column"] == "id"
    with pytest.raises(DataError, match="no split 'test'"):
        _load("jgraphqa", BenchmarkSource(path=tmp_path / "jgraphqa", split="test"))

    verified = Dataset.from_dict({"image": [{"bytes": PNG, "path": None}], "question": ["Q"], "answer": ["A"],
                                  "original_id": ["7"]},
                                 features=Features({"image": Image(), "question": Value("string"),
                                                    "answer": Value("string"), "original_id": Value("string")}))
    DatasetDict({"test": verified}).save_to_disk(str(tmp_path / "verified"))
    r = _load("jgraphqa", BenchmarkSource(path=tmp_path / "verified"))
    assert [(s.id, s.split) for s in r.samples] == [("7", "test")]

    # No id column at all (r-g2-2024/JGraphQA-style rows): the row index is the id; extra columns are kept.
    plain = Dataset.from_dict({"image": [{"bytes": PNG, "path": None}] * 2, "question": ["Q1", "Q2"],
                               "answer": ["A1", "A2"], "type": ["graph", "table"]},
                              features=Features({"image": Image(), "question": Value("string"),
                                                 "answer": Value("string"), "type": Value("string")}))
    DatasetDict({"test": plain}).save_to_disk(str(tmp_path / "plain"))
    r = _load("jgraphqa", BenchmarkSource(path=tmp_path / "plain"))
    assert [s.id for s in r.samples] == ["0000", "0001"] and r.samples[1].metadata["type"] == "table"


def test_bad_values_are_row_errors(tmp_path: Path) -> None:
    ds = Dataset.from_dict({
        "question": ["ok", "ok", "ok", "ok", None, "ok", "ok", "ok"],
        "answer": ["a", "a", "a", "a", "a", "  ", "a", "a"],
        "original_id": ["1", "2", "3", "4", "5", "6", "7", "1"],
        "image_type": ["Bar", "Histogram", None, None, None, None, None, None],
        "topic_group": [None, None, "Sports", None, None, None, None, None],
        "flags": [None, None, None, "Global, Tricky", None, None, None, None],
        "image_url": [None, None, None, None, None, None, "ftp://x/y.png", None],
    })
    ds.to_parquet(str(tmp_path / "bad.parquet"))
    result = _load("hakusho", BenchmarkSource(path=tmp_path / "bad.parquet"))
    assert [s.id for s in result.samples] == ["1"]
    got = [(e.row, e.field) for e in result.errors]
    assert got == [("bad.parquet[1]", "image_type"), ("bad.parquet[2]", "topic_group"), ("bad.parquet[3]", "flags"),
                   ("bad.parquet[4]", "question"), ("bad.parquet[5]", "answer"), ("bad.parquet[6]", "image_url"),
                   ("1", "id")]
    assert "Histogram" in result.errors[0].message and "Bar" in result.errors[0].message
    assert "Tricky" in result.errors[2].message
    assert "duplicate id" in result.errors[-1].message
    with pytest.raises(DataError, match=r"hakusho row bad.parquet\[1\] field 'image_type'"):
        _load("hakusho", BenchmarkSource(path=tmp_path / "bad.parquet"), strict=True)


def test_broken_embedded_image_and_bad_files(tmp_path: Path) -> None:
    not_an_image = {"bytes": b"<html>oops</html>", "path": None}
    ds = Dataset.from_dict({"question": ["Q"], "answer": ["A"], "image": [not_an_image]},
                           features=Features({"question": Value("string"), "answer": Value("string"),
                                              "image": Image()}))
    DatasetDict({"test": ds}).save_to_disk(str(tmp_path / "disk"))
    result = _load("hakusho", BenchmarkSource(path=tmp_path / "disk"))
    assert result.samples == [] and result.errors[0].field == "image"
    assert "not a PNG/JPEG/GIF/BMP/WEBP image" in result.errors[0].message
    f = tmp_path / "rows.json"
    f.write_bytes('[{"question": "質問", "answer": "答え"}]'.encode("shift_jis"))
    result = _load("hakusho", BenchmarkSource(path=f))
    assert "not UTF-8" in result.errors[0].message and result.errors[0].row == "rows.json"
    f.write_text('{"question": 1}', encoding="utf-8")
    assert "expected a JSON list" in _load("hakusho", BenchmarkSource(path=f)).errors[0].message
    f.write_text('[{"question": ["Q"], "answer": "A"}]', encoding="utf-8")
    err = _load("hakusho", BenchmarkSource(path=f)).errors[0]
    assert (err.field, err.message) == ("question", "expected str, got list")


def test_enum_spellings() -> None:
    assert parse_enum(ImageType, "infographic") is ImageType.INFOGRAPHIC
    assert parse_enum(TopicGroup, "Energy & Environment") is TopicGroup.ENERGY_ENVIRONMENT
    assert parse_enum(TopicGroup, "energy_environment") is TopicGroup.ENERGY_ENVIRONMENT
    assert parse_flags("External knowledge、Visual; multi hop") == [Flag.EXTERNAL_KNOWLEDGE, Flag.VISUAL,
                                                                     Flag.MULTI_HOP]
    with pytest.raises(ValueError, match="unknown value 'Pictogram'"):
        parse_enum(ImageType, "Pictogram")
    with pytest.raises(ValueError, match="expected a list of flag names"):
        parse_flags(3)


def test_default_sources() -> None:
    ensure_registered()
    h = BENCHMARKS.get("hakusho").default_source()
    assert (h.hf_id, h.split, h.revision) == ("llm-jp/HakushoBench", "test",
                                              "41de46f6bbd418eb0c2a1041bcd810448b80e045")
    j = BENCHMARKS.get("jgraphqa").default_source()
    assert (j.hf_id, j.split) == ("llm-jp/JGraphQA-Verified", "test")
