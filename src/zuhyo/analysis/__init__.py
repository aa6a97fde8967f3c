"""Dataset analysis: statistics tables, visual diversity and hard-subset selection.

Light to import: numpy only at module level; torch/transformers load when an ``hf`` embedder is built.
"""

from __future__ import annotations

from zuhyo.analysis.diversity import DiversityResult, mean_pairwise_cosine_distance
from zuhyo.analysis.hard_subset import HardSubset, select_hard_subset, write_hard_subset
from zuhyo.analysis.statistics import DatasetStatistics, StatTable, dataset_statistics, write_statistics

__all__ = ["DatasetStatistics", "DiversityResult", "HardSubset", "StatTable", "dataset_statistics",
           "mean_pairwise_cosine_distance", "select_hard_subset", "write_hard_subset", "write_statistics"]
