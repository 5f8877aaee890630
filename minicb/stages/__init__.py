"""One module per batching stage; each builds on ``base.Engine``."""
