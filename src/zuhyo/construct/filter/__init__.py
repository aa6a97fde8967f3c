"""Filtering collected figures: unreadable files, low resolution, near duplicates, and chart/table vs not."""
