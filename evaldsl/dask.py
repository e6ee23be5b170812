"""evaldsl on Dask: `evaldsl.dask.score(program, bag_of_paths)` for people already in Dask.

Takes a program (an `evaldsl.Program` or its text) and a dask bag of trace paths, and gives
a bag of records (`score`) and their summary (`summarize`); the implementation, and the
engine of `evaldsl score --dask`, is `evaldsl.score.cluster`. Needs
`pip install 'evaldsl[dask]'`.
"""

from evaldsl.score.cluster import score, summarize

__all__ = ["score", "summarize"]
