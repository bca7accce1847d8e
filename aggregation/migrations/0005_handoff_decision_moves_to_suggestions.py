# The HandoffDecision model moved to the suggestions app; its table (aggregation_handoffdecision) stays as it is.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('aggregation', '0004_aggregate_settings_version'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='HandoffDecision')],
            database_operations=[],
        ),
    ]
