"""`zuhyo sample`: choose n charts whose complexity distribution matches the pool's (DomainCQA Algorithm 1),
from a workspace (recorded as decisions) or from a CSV of CCVs (no workspace)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from zuhyo.cli._common import JsonOpt, emit_json, fail, result_console

_STATS = ("n", "pool", "tvd_joint", "tvd_score", "max_attr_diff", "random_tvd_joint")


def _parse_quotas(items: list[str] | None) -> dict[str, int] | None:
    if not items:
        return None
    out: dict[str, int] = {}
    for item in items:
        group, _, count = item.rpartition("=")
        if not group or not count.strip().isdigit():
            fail(f"--quota expects GROUP=COUNT, got {item!r}")
        out[group.strip()] = int(count)
    return out


def _print_stats(stats: dict[str, Any], where: str) -> None:
    result_console.print(f"{where}: {stats['n']} of {stats['pool']} charts chosen; joint CCV TVD "
                         f"{stats['tvd_joint']:.3f} "
                         f"(a uniform random sample: {stats['random_tvd_joint']:.3f}), L1-score TVD "
                         f"{stats['tvd_score']:.3f}, largest attribute gap {stats['max_attr_diff']:.3f}",
                         highlight=False)


def sample_cmd(
    ws: Annotated[Path | None, typer.Argument(help="Workspace folder (made by `zuhyo init`); omit with "
                                                   "--ccv-csv.")] = None,
    n: Annotated[int, typer.Option("--n", help="How many charts to choose.")] = 303,
    seed: Annotated[int, typer.Option("--seed", help="Random seed: the same seed and pool give the same "
                                                     "sample.")] = 0,
    ccv_csv: Annotated[Path | None, typer.Option("--ccv-csv", help="Sample from this CSV instead of a workspace: "
                                                                   "columns id, then the 10 CCV names (values 0/1)."
                                                 )] = None,
    out: Annotated[Path | None, typer.Option("--out", help="With --ccv-csv: write the chosen rows (in pool order) "
                                                           "to this CSV.")] = None,
    quota_by: Annotated[str | None, typer.Option("--quota-by", help="Workspace only: fixed counts per source, "
                                                                    "image_type or document (proportional unless "
                                                                    "--quota is given).")] = None,
    quota: Annotated[list[str] | None, typer.Option("--quota", help="GROUP=COUNT for --quota-by (repeatable; "
                                                                    "the counts sum to --n).")] = None,
    refine: Annotated[bool, typer.Option("--refine/--no-refine", help="After Algorithm 1, swap charts so every "
                                                                      "attribute's share and the score histogram "
                                                                      "match the pool's too (zuhyo's addition); "
                                                                      "--no-refine: Algorithm 1 alone.")] = True,
    json_out: JsonOpt = False,
) -> None:
    """Choose --n charts by Gibbs sampling (DomainCQA Algorithm 1) so their CCV distribution matches the pool's."""
    if (ws is None) == (ccv_csv is None):
        fail("give a workspace or --ccv-csv (one of the two)")
    quotas = _parse_quotas(quota)
    if quotas and not quota_by:
        fail("--quota needs --quota-by")
    if ccv_csv is not None:
        if quota_by:
            fail("--quota-by needs a workspace")
        _sample_csv(ccv_csv, n, seed, out, json_out, refine)
        return
    if out is not None:
        fail("--out is for --ccv-csv (a workspace records its sample as decisions)")
    assert ws is not None
    from zuhyo.cli.workspace import open_workspace

    with open_workspace(ws) as w:
        from zuhyo.construct.select.sample_stage import sample_workspace

        report = sample_workspace(w, n, seed, quota_by=quota_by, quotas=quotas, refine=refine)
    if json_out:
        emit_json(report.model_dump(mode="json"))
        return
    _print_stats(report.model_dump(), str(ws))
    what = (f"recorded as sample run {report.run_id}" if report.recorded
            else f"the current sample already (run {report.run_id}); nothing recorded")
    result_console.print(f"  {what}; {report.sweeps} sweeps, "
                         f"{'stabilized' if report.stabilized else 'stopped at the sweep limit'}", highlight=False)
    for group, count in report.groups.items():
        result_console.print(f"  {quota_by} {group}: {count}", highlight=False)


def _sample_csv(path: Path, n: int, seed: int, out: Path | None, json_out: bool, refine: bool) -> None:
    from zuhyo.construct.select.sampling import format_ccv_csv, gibbs_sample, parse_ccv_csv, sample_stats

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        fail(f"{path}: cannot read ({e})")
    table = parse_ccv_csv(text, name=str(path))
    result = gibbs_sample(table.ccvs, n, seed, refine=refine)
    stats = sample_stats(table.ccvs, result.indices, seed)
    if out is not None:
        out.write_text(format_ccv_csv(table, result.indices.tolist()), encoding="utf-8")
    if json_out:
        emit_json({k: stats[k] for k in _STATS})
        return
    _print_stats(stats, str(path))
    if out is not None:
        result_console.print(f"  chosen rows written to {out}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("sample")(sample_cmd)
