"""The 8-tuple running example of paper 000 (spec ``asap.md`` 3.4, Figures 1-5): two numeric
QIs x, y and the disease, shared by the tests of Mondrian(+/++), pick-up and MASK+."""

from __future__ import annotations

import pandas as pd

RUNNING = pd.DataFrame(
    {
        "x": [6, 7, 7, 5, 5, 6, 2, 0],
        "y": [0, 0, 1, 3, 2, 4, 6, 4],
        "disease": [
            "AIDS",
            "diabetes",
            "heart disease",
            "cancer",
            "cancer",
            "mumps",
            "gastritis",
            "gastritis",
        ],
    }
)
