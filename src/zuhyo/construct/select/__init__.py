"""Selection: image types (HakushoBench's 11 classes), DomainCQA's Chart Complexity Vectors, and the Gibbs sample
that keeps the pool's complexity distribution (DomainCQA Algorithm 1)."""
