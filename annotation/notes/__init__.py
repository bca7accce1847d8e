"""Notes on items: an annotator's flags and the lead's actions on an item (comment, gold, send back, resolve a
flag). ``services`` writes, ``selectors`` read for the review page, the dashboard and the annotation page, and
``views`` (with ``urls``) answer the forms of those pages."""
