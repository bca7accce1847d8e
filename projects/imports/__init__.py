"""Import of items from an upload to rows: ``rows`` checks each row of Penumbra's JSON Lines (native or TRL
preference shape) before anything is written, ``items`` writes a file whole or not at all, ``formats`` first converts
other tools' files (through ``projects.formats``), and ``tasks`` runs an import as a background Job with progress."""
