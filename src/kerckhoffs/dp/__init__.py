"""Differential privacy (paper 004's safe alternative to syntactic anonymization: its Definitions
10-13, Proposition 14, Theorem 15 and the mechanisms it points to;
``docs/theory/composition.md#differential-privacy``, ``#theorems``, ``#dp-mechanisms``): releases
whose guarantee survives composition and any side information. Every random draw is OpenDP's;
counting is numpy.
"""
