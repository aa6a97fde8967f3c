"""Construction pipeline (HakushoBench §3.1, DomainCQA §4.1): workspace, collectors, filters."""
