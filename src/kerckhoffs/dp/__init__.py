"""Differential privacy (paper 004's safe alternative to syntactic anonymization; spec
``composition.md`` 2.9-2.12, 3.8-3.10): releases whose guarantee survives composition and any
side information. Every random draw is OpenDP's; counting is numpy.
"""
