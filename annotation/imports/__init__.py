"""Import of existing human labels, so a lab can bring its old data and measure it: ``label_rows`` checks each row
of Penumbra's JSON Lines, ``labels`` reads a file page by page and ``label_writes`` writes each page (COPY on
PostgreSQL), ``formats`` first converts other tools' files (through
``projects.formats``), and ``tasks`` runs either as a background Job (the item import's plumbing,
``projects.imports.tasks``)."""
