"""Search: query analysis, the lexical and dense legs, fusion and ranking, snippets.

``engine.py`` runs a query end to end; ``rank.py`` holds every ranking constant.
"""
