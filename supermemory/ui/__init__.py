"""`supermemory ui`: a local page to see, search and clean the store (server, JSON endpoints, assets)."""
