# HandoffDecision, taken over from aggregation with its table unchanged: only Django's state learns of the move.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('aggregation', '0005_handoff_decision_moves_to_suggestions'),
        ('projects', '0007_item_extra_labels'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='HandoffDecision',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('action', models.CharField(choices=[('handed_off', 'Handed the remaining items to the LLM'), ('undone', 'Handoff undone'), ('eligible', 'Became eligible'), ('not_eligible', 'Not eligible')], max_length=14)),
                        ('rule', models.CharField(choices=[('point', 'Blind agreement ≥ threshold'), ('lower_bound', 'Lower 95 % bound of blind agreement ≥ threshold')], max_length=12)),
                        ('explanation', models.TextField()),
                        ('figures', models.JSONField(default=dict)),
                        ('items_affected', models.PositiveIntegerField(default=0)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('decided_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='handoff_decisions', to='projects.project')),
                    ],
                    options={
                        'ordering': ['-created_at', '-id'],
                        'db_table': 'aggregation_handoffdecision',
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
