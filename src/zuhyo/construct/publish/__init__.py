"""Publishing: the Hugging Face dataset export (Parquet shards, ``save_to_disk``), its dataset card and plots, and
the Hub push."""
