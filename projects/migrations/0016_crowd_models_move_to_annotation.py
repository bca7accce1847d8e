
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('projects', '0015_study_link_language'),
    ]

    # The crowd study's models moved to annotation.crowd (annotation 0010 takes them over). Their tables stay as they
    # are: only Django's picture of which app owns them changes here.
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
        migrations.RemoveField(
            model_name='studylink',
            name='created_by',
        ),
        migrations.RemoveField(
            model_name='studylink',
            name='project',
        ),
        migrations.DeleteModel(
            name='Participant',
        ),
        migrations.DeleteModel(
            name='StudyLink',
        ),
            ],
            database_operations=[],
        ),
    ]
