"""A label import checks foreign keys statement by statement while it writes; after it, the transaction checks them
at the commit again, as every other write expects."""

from __future__ import annotations

import json

import pytest
from django.db import IntegrityError, connection, transaction

from annotation.imports.labels import labels_import
from projects.models import Item


def test_a_dangling_key_written_after_an_import_waits_for_the_commit_check(project):
    item = project.items.order_by("id").first()
    row = {
        "item": item.external_id,
        "annotator": "alice",
        "mode": "ifs",
        "values": [{"position": 0, "mu": 0.7, "nu": 0.1}, {"position": 1, "mu": 0.2, "nu": 0.6}],
    }
    missing_item = (Item.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000

    assert labels_import(project=project, lines=[json.dumps(row)]).created == 1

    savepoint = transaction.savepoint()
    with connection.cursor() as cursor:
        # Were the checks left per statement, this statement would fail here rather than at the check below.
        cursor.execute("UPDATE annotation_annotation SET item_id = %s WHERE item_id = %s", [missing_item, item.pk])
    with pytest.raises(IntegrityError):
        connection.check_constraints()
    transaction.savepoint_rollback(savepoint)
