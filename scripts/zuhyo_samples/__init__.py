"""Data, questions and renderers of zuhyo's bundled sample benchmarks (driven by ``scripts/render_samples.py``)."""
