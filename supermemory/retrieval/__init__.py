"""Recall as a pipeline: `query` (analysed once) → `candidates` (lexical + vector, from the store
layer) → `ranking` (pure: features, gates, softmax, MMR, budget) → `pipeline` (results, search log)."""
