"""Method studies (crossover designs): a lead sets one up, every annotator judges a planned set of items with
each method in a planned order, and the plan is stored once as the audit record. ``design`` builds the plan (pure, no
Django), ``models`` stores it, ``services`` sets a study up, ``selectors`` tell the queue and the page which item and
which method come next, and ``views``/``api`` (with their ``urls``/``api_urls``) serve the lead."""
