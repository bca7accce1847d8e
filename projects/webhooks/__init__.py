"""Webhooks: a lead's URLs told, signed, of what happens in a project (labels saved, imports and exports done, the
handoff made, undone or suspended by the audit, the project complete).

``models.py`` the hooks and their delivery log; ``signing.py`` the Standard Webhooks headers; ``services.py``
registration, the deliveries an event makes and one attempt; ``receivers.py`` the events heard (config.events);
``tasks.py`` delivery with retries and backoff; ``selectors.py`` and ``views.py`` the lead's page. Its own Django app
(label ``webhooks``) on the projects floor: it sees every event and imports nothing above projects.
"""
