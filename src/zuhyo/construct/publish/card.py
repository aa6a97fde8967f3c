"""The dataset card (``README.md``) of an exported dataset: the Hub's YAML header, then what a user must know.

Sections: how to load it, the columns, the statistics tables of ``zuhyo analyze stats`` (with their bar charts; one
section per QA style present, :mod:`zuhyo.construct.publish.card_styles`),
the sources and their licences, and the construction steps with the counts at each stage (from the workspace's
own records, :mod:`zuhyo.construct.workspace.stage_counts`). The YAML header carries the licence, task category,
size category and the ``configs`` entry that points the Hub (and ``datasets.load_dataset(folder)``) at the Parquet
shards.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from zuhyo.construct.publish.hub_columns import HUB_COLUMNS
from zuhyo.construct.qa.draft_mix import TABLE1_AQA, TABLE1_FQA
from zuhyo.schema import Sample

if TYPE_CHECKING:
    from zuhyo.analysis.statistics import DatasetStatistics
    from zuhyo.construct.publish.report import ExportReport
    from zuhyo.construct.workspace.stage_counts import StepCount

#: What each flat column holds (zuhyo.schema.FLAT_COLUMNS).
COLUMNS = (
    ("id", "sample id, `qa-<workspace QA item id>`"),
    ("benchmark", "the dataset's name"),
    ("question", "the question"),
    ("answers", "reference answers; the first is the primary one"),
    ("image", "the image (a `datasets.Image`: `{bytes, path}`, shown by the Hub's viewer), with `--images embed`"),
    ("image_path", "unused in exports (local file path)"),
    ("image_url", "the image's original URL, with `--images url` (fetch with `zuhyo images fetch`)"),
    ("image_sha256", "SHA-256 of the image file's bytes"),
    ("image_width", "width in pixels"),
    ("image_height", "height in pixels"),
    ("image_mime", "MIME type of the image file"),
    ("meta_json", "everything else of zuhyo's Sample as JSON: image type, difficulty flags, DomainCQA category, "
                  "aspect, axis range and CCV, source (title, URL, caption, citing text, paper, licence), workflow "
                  "metadata (figure, status, revision, drafting model and prompt version)"),
    *HUB_COLUMNS,
    ("provenance", "the item's chain of human checks as JSON: protocol, origin (person or drafting model), author and "
                   "revisers (pseudonymous ids), each blind verification (answer, verdict, match method rules / llm / "
                   "adjudicated), each review round, the decision and its time"),
)


def _yaml(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` value for ``n`` rows."""
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def yaml_header(report: ExportReport, license: str, language: Sequence[str]) -> str:
    lines = ["---", f"license: {_yaml(license)}", f"pretty_name: {_yaml(report.name)}",
             "task_categories:", "- visual-question-answering"]
    if language:
        lines += ["language:", *[f"- {_yaml(lang)}" for lang in language]]
    lines += ["size_categories:", f"- {size_category(report.items)}", "tags:", "- charts", "- tables", "- zuhyo",
              "configs:", "- config_name: default", "  data_files:", f"  - split: {_yaml(report.split)}",
              f"    path: {_yaml(f'{report.split}-*.parquet')}", "---", ""]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        value = ", ".join(f"{k} {_cell(v) or 'none'}" for k, v in value.items()) if value else ""
    elif isinstance(value, list):
        value = ", ".join(str(v) for v in value)
    elif isinstance(value, float):
        value = f"{value:.3f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def sources_table(samples: Sequence[Sample]) -> tuple[str, list[str]]:
    """Markdown table of sources (title, licence, items, images) and the titles with no licence recorded."""
    rows: dict[str, dict[str, Any]] = {}
    for smp in samples:
        src = smp.source
        title = (src.title if src else None) or "(untitled)"
        entry = rows.setdefault(title, {"license": src.license if src else None, "items": 0, "images": set(),
                                        "urls": set()})
        entry["items"] += 1
        if smp.image is not None and smp.image.sha256:
            entry["images"].add(smp.image.sha256)
        if src is not None and src.url and len(entry["urls"]) < 1:
            entry["urls"].add(src.url)
    missing = [t for t, e in rows.items() if not e["license"]]
    lines = ["| source | licence | QA items | images | e.g. |", "|---|---|---:|---:|---|"]
    for title, e in sorted(rows.items(), key=lambda kv: -kv[1]["items"]):
        lic = e["license"] or "**not recorded: check the source's terms before publishing**"
        lines.append(f"| {_cell(title)} | {_cell(lic)} | {e['items']} | {len(e['images'])} | "
                     f"{_cell(next(iter(e['urls']), ''))} |")
    return "\n".join(lines) + "\n", missing


def steps_table(steps: Sequence[StepCount], exported: int) -> str:
    lines = ["| step | command | count | detail | runs | models |", "|---|---|---:|---|---:|---|"]
    for st in steps:
        lines.append(f"| {st.step} | `{st.command}` | {st.count} | {_cell(st.detail)} | {st.runs} | "
                     f"{_cell(st.models)} |")
    lines.append(f"| exported | `zuhyo export` | {exported} | | | |")
    return "\n".join(lines) + "\n"


def funnel_section(report: ExportReport) -> str:
    """The human quality control in the papers' terms: per protocol, items at each check, and the experts' α."""
    lines = ["## Quality control\n",
             "Every exported item passed its protocol's human checks (`zuhyo export` refuses any that did not); the "
             "`provenance` column records each item's chain. HakushoBench (§3.3): people author, a second "
             "annotator answers blind, matching answers are accepted (5,903 → 2,053 there). DomainCQA (§3.3, "
             "§4.3): drafts are rated Valid/Flawed by two experts, more rounds until consensus.\n"]
    labels = {"hakusho": ("authored", "verified", "revised", "accepted", "discarded"),
              "domaincqa": ("drafted", "reviewed", "revised", "accepted", "discarded")}
    for protocol, steps in labels.items():
        counts = report.funnel.get(protocol, {})
        if not any(counts.values()):
            continue
        lines.append(f"| {protocol} | " + " | ".join(steps) + " |")
        lines.append("|---|" + "---:|" * len(steps))
        lines.append("| items | " + " | ".join(str(counts.get(s, 0)) for s in steps) + " |\n")
    alpha = report.review_alpha
    if alpha:
        ci = alpha.get("ci95")
        ci_text = f" (95 % bootstrap CI {ci[0]:.3f} to {ci[1]:.3f})" if ci else ""
        lines.append(f"Experts' agreement: Krippendorff's α = {alpha['alpha']:.3f}{ci_text}, nominal, "
                     f"{alpha['coders']} experts, {alpha['units']} items.\n")
    return "\n".join(lines) + "\n"


def kind_key(sample: Sample) -> str | None:
    """A DomainCQA item's kind as ``zuhyo draft`` names it (``FQA-Visual:Color``, ``AQA-KB-Summary``); None for
    other items."""
    astro = sample.astro
    if astro is None:
        return None
    base = f"{astro.qa_type.value}-{astro.category.value}"
    return f"{base}:{astro.aspect.value}" if astro.aspect is not None else base


def mix_section(draft_mix: Mapping[str, Any] | None, samples: Sequence[Sample]) -> str:
    """DomainCQA's question mix (Table 1) beside the latest drafting run's plan (``zuhyo draft --mix``) and the
    exported items' counts per kind; empty when no item is a DomainCQA one."""
    exported = Counter(k for k in (kind_key(s) for s in samples) if k is not None)
    if not exported:
        return ""
    planned: dict[str, int] = {}
    for family, counts in (draft_mix or {}).get("planned", {}).items():
        if family in ("FQA", "AQA") and isinstance(counts, dict):
            planned.update(counts)
    mix = (draft_mix or {}).get("mix", "every")
    lines = ["## Question mix\n",
             f"Drafted with `zuhyo draft --mix {mix}` (latest drafting run); DomainCQA Table 1 is the paper's "
             "AstroChart mix (1,509 FQA on 303 charts, 381 AQA on 257 chart abstracts). Planned: questions "
             "asked of the model; exported: items in this dataset.\n",
             "| kind | DomainCQA Table 1 | planned | exported |", "|---|---:|---:|---:|"]
    paper = {**TABLE1_FQA, **TABLE1_AQA}
    for key in [*paper, *sorted(k for k in exported if k not in paper)]:
        lines.append(f"| {key} | {paper.get(key, '')} | {planned.get(key, '')} | {exported.get(key, 0)} |")
    lines.append(f"| total | {sum(paper.values())} | {sum(planned.values()) if planned else ''} | "
                 f"{sum(exported.values())} |")
    return "\n".join(lines) + "\n"


def render_card(report: ExportReport, stats: DatasetStatistics, steps: Sequence[StepCount], *,
                plots: Sequence[tuple[str, str, str, str]], samples: Sequence[Sample], license: str,
                language: Sequence[str] = (), draft_mix: Mapping[str, Any] | None = None) -> str:
    """The whole README.md. ``plots``: (table key, title, relative PNG path, caption) per chart; ``draft_mix``: the
    latest drafting run's ``{"mix", "planned"}`` (:func:`mix_section`)."""
    src_md, no_license = sources_table(samples)
    status = ", ".join(f"{n} {k}" for k, n in report.by_status.items())
    images = ("embedded in the rows (`image_bytes`)" if report.images_mode == "embed"
              else "given by their original URL (`image_url`) and SHA-256; fetch them with `zuhyo images fetch`")
    parts = [
        yaml_header(report, license, language),
        f"# {report.name}\n",
        f"A chart and table question-answering dataset: **{report.items} QA items** over **{report.images} "
        f"images** ({status}), built with zuhyo from a construction workspace. Images are "
        f"{images}. Split: `{report.split}`.\n",
    ]
    if report.dry_run:
        parts.append(f"> **A rehearsal, not data: {report.dry_run} of {report.items} items hold placeholders of the "
                     "`dry-run` backend** (exported with `--allow-dry-run`, e.g. by `zuhyo demo build`); every such "
                     "row says `\"dry_run\": true` in `meta_json`. Do not publish or evaluate on it.\n")
    if report.by_status.get("draft"):
        n = report.by_status["draft"]
        parts.append(f"> **{n} {'item is a draft' if n == 1 else 'items are drafts'}** (model-written, not yet "
                     "verified by people); use them with care.\n")
    if report.skipped:
        parts.append(f"> {report.skipped} items were left out because their image could not be exported.\n")
    parts += [
        "## Loading\n",
        "```bash\nzuhyo eval --bench local --path ./" + report.name + " --model SPEC\n"
        "zuhyo analyze stats local --path ./" + report.name + "\n```\n",
        "```python\nimport datasets\nfrom zuhyo.schema import sample_from_flat\n\n"
        f"ds = datasets.load_dataset(\"parquet\", data_files=\"{report.split}-*.parquet\", split=\"train\")\n"
        "samples = [sample_from_flat(row) for row in ds]\n```\n",
        "## Columns\n",
        "| column | what |\n|---|---|\n" + "".join(f"| `{c}` | {w} |\n" for c, w in COLUMNS),
        "## Statistics\n",
        f"{stats.questions} questions over {stats.images} distinct images (tables as `zuhyo analyze stats` makes "
        "them; CSV and JSON in `statistics/`).\n",
    ]
    from zuhyo.construct.publish.card_styles import CardInput, statistics_sections

    by_key = {key: (title, path, caption) for key, title, path, caption in plots}
    parts += statistics_sections(CardInput(samples, stats, by_key))
    parts.append(mix_section(draft_mix, samples))
    parts += ["## Sources and licences\n", src_md]
    if no_license:
        parts.append(f"{len(no_license)} sources have no licence recorded in the workspace; the dataset's licence "
                     f"(`{license}`) does not cover them until checked.\n")
    parts.append(funnel_section(report))
    parts += [
        "## Construction\n",
        "Counts at each step of the construction pipeline, from the workspace's records (decisions, labels, votes, "
        "QA items, audit flags, reviews). Figures are counted per step; QA items from drafting on.\n",
        steps_table(steps, report.items),
        "Methods: figure collection and filtering, image types and one hard question per image with difficulty "
        "flags as in HakushoBench (§3); Chart Complexity Vectors, Gibbs sampling (Algorithm 1), chart abstracts "
        "(Algorithm 2) and QA categories as in DomainCQA (§3–4, Table 1).\n",
    ]
    return "\n".join(parts)
