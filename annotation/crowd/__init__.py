"""Study links and their crowd participants: a lead creates a link, a participant arriving from a crowd platform
(Prolific or another) enters through its token, labels on the ordinary annotation page within the link's quota and
attention checks, and ends on a completion code. ``services`` writes, ``selectors`` reads, ``export`` writes the
per-participant file, and ``views``/``api`` (with their ``urls``/``api_urls``) serve participants and leads."""
