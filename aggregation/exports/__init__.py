"""Exports of a project's labels and aggregates: ``stream`` writes JSON Lines a page of items at a time with constant
memory, ``options`` checks what an export may be asked for, ``card`` gathers the facts of the dataset card shipped with
every export, ``tasks`` writes an export as a background Job, and ``views`` is the lead's export page."""
