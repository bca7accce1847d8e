"""The figures of a project's recompute: its judgments as arrays (``judgments``, with the settings they are read
under in ``settings``), the per-item and per-annotator figures computed from them (``items``, ``annotators``; pure,
so a notebook can run them), the project figures and plots (``project``) and the small SVG charts the pages draw
(``svg``). ``aggregation.loading`` fills the arrays and ``aggregation.writers`` stores the results."""
