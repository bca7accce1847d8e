"""Unannounced repeats: an item shown again to the same annotator, to measure their self-consistency."""
