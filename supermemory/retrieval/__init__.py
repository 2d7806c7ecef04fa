"""Recall as a pipeline you can read top to bottom, from the query text to the result page.

`query` (analysed once) → `candidates` (lexical + vector, read through the store layer) →
`ranking` (pure: features, gates, softmax attention, MMR, token budget) → `pipeline` (the page,
the recall counters and the search log).
"""
