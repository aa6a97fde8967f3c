"""Collectors: figures with their captions and provenance from HTML editions, LaTeX sources, PDFs and folders."""
