"""scrydb's training pipeline: the corpus, the shipped model and its learned fusion, the
teacher and the distilled student, the offline scorers. One entry point:

    python -m training STEP [ARGS...]      # python -m training --help lists the steps

Nothing here runs at search time or in CI's tests beyond small fixtures; see README.md.
"""
