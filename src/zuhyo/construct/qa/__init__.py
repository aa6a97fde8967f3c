"""Questions: chart abstracts chosen by voting models (DomainCQA Algorithm 2), QA drafted per category (DomainCQA
Table 1) or in the HakushoBench style (§3.2), the model audit, and the one write path of QA items."""
