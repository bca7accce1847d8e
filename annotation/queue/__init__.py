"""The annotator's queue: which item comes next and the claim that holds it. ``services`` claims the next item,
holds a named one and keeps the claim's lease; ``order`` says what is served before the ordinary scan (unannounced
repeats, then escalated items). The statements the queue shares with the save and the page stay at the app's root
(``config.compiled_sql``, ``annotation.requests``), below both."""
