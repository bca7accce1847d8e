"""The annotator's page: its views and form parsing, the page's context, the home list, the after-label resolution."""
