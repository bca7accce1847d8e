"""From labels to conclusions: the model leaderboard (Bradley-Terry with Davidson ties, intervals clustered by item),
prediction-powered figures that combine the LLM's labels on every item with people's labels on a random sample, and
human-human agreement that generalises over annotators. ``figures`` computes them on loaded judgments (no Django),
``selectors`` reads and caches them for leads only, ``views`` serves the page, its CSV and SVG, and the API. The
maths itself lives in ``aggregation.maths`` (``leaderboard``, ``ppi``, ``annotator_population``)."""
