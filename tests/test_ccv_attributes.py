"""DomainCQA Appendix A, Table 3: the 10 CCV attributes, in vector order, name the statistics tables' rows."""

from __future__ import annotations

import pytest

from zuhyo.analysis.statistics import ccv_tables
from zuhyo.schema import CCV_ATTRIBUTES, AstroMeta, Sample


def test_table_3_names_groups_and_order() -> None:
    assert [a.name for a in CCV_ATTRIBUTES] == ["Annotation", "Color", "Legend", "Pattern", "Axis", "Element",
                                                "Scale", "Formula", "Subplot", "Type"]
    assert [a.group for a in CCV_ATTRIBUTES] == ["Visual"] * 4 + ["Data Interpretation"] * 4 + ["Structural"] * 2
    by = {a.name: a for a in CCV_ATTRIBUTES}
    assert by["Axis"].simple == "Single axis."
    assert by["Scale"].complex == "Utilizes logarithmic, power-law, or mixed scales."
    assert by["Color"].complex == "More than two distinct colors or employs a color bar."


def _chart(i: int, ccv: list[int]) -> Sample:
    return Sample(id=f"s{i}", benchmark="astrochart", question="q", answers=["a"],
                  astro=AstroMeta(qa_type="FQA", category="Summary", ccv=ccv))


def test_statistics_name_the_attributes_as_the_paper_does() -> None:
    samples = [_chart(0, [0, 0, 0, 0, 0, 0, 1, 0, 0, 0]), _chart(1, [0, 0, 0, 0, 0, 0, 1, 1, 0, 0])]
    (attrs, _), warnings = ccv_tables(samples, None)
    rows = attrs.to_records()
    assert [(r["complexity"], r["attribute"]) for r in rows][:2] == [("Visual", "Annotation"), ("Visual", "Color")]
    scale = next(r for r in rows if r["attribute"] == "Scale")
    assert (scale["dimension"], scale["charts"], scale["share of charts"]) == (7, 2, 1.0)
    assert "Formula = 1: Includes mathematical formulas." in attrs.note and not warnings
    assert "| 8 | Data Interpretation | Formula | 1 | 50.0 % |" in attrs.to_markdown()
    # Names of another CCV definition still replace them (and drop the paper's groups and definitions).
    (custom, _), _ = ccv_tables(samples, None, [f"n{i}" for i in range(10)])
    assert [r["attribute"] for r in custom.to_records()][6] == "n6" and "Table 3" not in custom.note
    with pytest.raises(ValueError, match="expected 10"):
        ccv_tables(samples, None, ["a"])
