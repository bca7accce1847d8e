
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _content_types_to(app_label):
    def move(apps, schema_editor):
        content_type = apps.get_model("contenttypes", "ContentType")
        for model in ("studylink", "participant"):
            if not content_type.objects.filter(app_label=app_label, model=model).exists():
                content_type.objects.filter(model=model, app_label__in=("projects", "annotation")).update(
                    app_label=app_label
                )

    return move


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0009_annotation_both_bad'),
        ('projects', '0016_crowd_models_move_to_annotation'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    # The crowd study's models, moved here from projects with their tables as they were (projects_studylink,
    # projects_participant): Django's state only. Their content types follow, so permissions granted on them stay.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
        migrations.CreateModel(
            name='StudyLink',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200)),
                ('token', models.CharField(max_length=64, unique=True)),
                ('completion_code', models.CharField(max_length=64)),
                ('screened_out_code', models.CharField(blank=True, help_text='Empty: no code for the screened out.', max_length=64)),
                ('active', models.BooleanField(default=True)),
                ('max_participants', models.PositiveIntegerField(blank=True, null=True)),
                ('items_per_participant', models.PositiveIntegerField(blank=True, help_text='Empty: until the queue ends.', null=True)),
                ('attention_item_ids', models.JSONField(blank=True, default=list, help_text='External ids of items with gold.')),
                ('attention_from_metadata', models.BooleanField(default=False)),
                ('attention_every', models.PositiveSmallIntegerField(default=5, help_text='One check after every N other items.')),
                ('attention_max_failures', models.PositiveSmallIntegerField(default=0)),
                ('skips_count_toward_quota', models.BooleanField(default=False)),
                ('attention_min_answered', models.PositiveSmallIntegerField(default=0)),
                ('consent_text', models.TextField(blank=True)),
                ('completion_url', models.CharField(blank=True, max_length=500)),
                ('return_code', models.CharField(blank=True, help_text='Empty: no code for returned participants.', max_length=64)),
                ('language', models.CharField(blank=True, help_text="Empty: the participant's browser decides.", max_length=16)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='study_links', to='projects.project')),
            ],
            options={
                'db_table': 'projects_studylink',
                'ordering': ['-created_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='Participant',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('external_id', models.CharField(max_length=64)),
                ('study_id', models.CharField(blank=True, max_length=64)),
                ('session_id', models.CharField(blank=True, max_length=64)),
                ('status', models.CharField(choices=[('active', 'Taking part'), ('completed', 'Completed'), ('screened_out', 'Screened out by attention checks'), ('returned', 'Returned without finishing')], default='active', max_length=12)),
                ('started_at', models.DateTimeField(auto_now_add=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('code_shown_at', models.DateTimeField(blank=True, null=True)),
                ('consented_at', models.DateTimeField(blank=True, null=True)),
                ('check_seed', models.BigIntegerField(default=0)),
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='study_participant', to=settings.AUTH_USER_MODEL)),
                ('link', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='participants', to='annotation.studylink')),
            ],
            options={
                'db_table': 'projects_participant',
                'ordering': ['started_at', 'id'],
            },
        ),
        migrations.AddConstraint(
            model_name='studylink',
            constraint=models.CheckConstraint(condition=models.Q(('max_participants__gte', 1)), name='study_link_max_participants_positive'),
        ),
        migrations.AddConstraint(
            model_name='studylink',
            constraint=models.CheckConstraint(condition=models.Q(('items_per_participant__gte', 1)), name='study_link_quota_positive'),
        ),
        migrations.AddConstraint(
            model_name='studylink',
            constraint=models.CheckConstraint(condition=models.Q(('attention_every__gte', 1)), name='study_link_attention_every_positive'),
        ),
        migrations.AddConstraint(
            model_name='studylink',
            constraint=models.CheckConstraint(condition=models.Q(('completion_code', ''), _negated=True), name='study_link_completion_code_set'),
        ),
        migrations.AddConstraint(
            model_name='studylink',
            constraint=models.CheckConstraint(condition=models.Q(('language__in', ['', 'en', 'hi', 'ar', 'es', 'zh-hans'])), name='study_link_language_known'),
        ),
        migrations.AddConstraint(
            model_name='participant',
            constraint=models.UniqueConstraint(fields=('link', 'external_id'), name='participant_unique_per_link'),
        ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(_content_types_to("annotation"), _content_types_to("projects")),
    ]
