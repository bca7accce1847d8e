"""The foreign keys of the item and response aggregates are checked per statement, not at commit.

Django creates every PostgreSQL foreign key DEFERRABLE INITIALLY DEFERRED: each inserted row then queues one check
per key until commit. A whole-project recompute inserts 1.2 M response rows, and the deferred queue cost more than
the inserts themselves (measured: 12.6 s insert + 15.9 s commit, against 21.1 s in all checked per statement). The
constraints stay; only when they are checked changes. Nothing writes these rows before their item, response or
criterion exists, and deletes go through the ORM's collector, which deletes the aggregates first.

A later AlterField on one of these keys would recreate it deferred: this migration's operation has to follow it.
"""

from django.db import migrations

TABLES = ("aggregation_responseaggregate", "aggregation_itemaggregate")


def _foreign_keys_set(schema_editor, timing: str) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite checks foreign keys per statement already (or at commit, without a queue per row)
    with schema_editor.connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute(
                "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f' ORDER BY conname",
                [table],
            )
            for (name,) in cursor.fetchall():
                quote = schema_editor.quote_name
                cursor.execute(f"ALTER TABLE {quote(table)} ALTER CONSTRAINT {quote(name)} {timing}")


def foreign_keys_immediate(apps, schema_editor):
    _foreign_keys_set(schema_editor, "NOT DEFERRABLE")


def foreign_keys_deferred(apps, schema_editor):
    _foreign_keys_set(schema_editor, "DEFERRABLE INITIALLY DEFERRED")


class Migration(migrations.Migration):
    dependencies = [
        ("aggregation", "0007_project_aggregate_study_figures"),
    ]

    operations = [
        migrations.RunPython(foreign_keys_immediate, foreign_keys_deferred),
    ]
