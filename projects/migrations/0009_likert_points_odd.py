from django.db import migrations, models


def refuse_even_scales(apps, schema_editor):
    """An even Likert scale has no middle, so its labels cannot be read without choosing a side for the two middle
    points: a person must decide (change the scale, or its labels) before the database can hold the rule."""
    project_model = apps.get_model("projects", "Project")
    even = list(
        project_model.objects.exclude(likert_points__in=[3, 5, 7, 9, 11]).values_list("pk", "name", "likert_points")
    )
    if even:
        named = "; ".join(f"#{pk} {name!r} ({points} points)" for pk, name, points in even)
        raise RuntimeError(
            f"Likert scales must have an odd number of points from 3 to 11; these projects do not: {named}. "
            "Set each one's likert_points to an odd number (Project settings) and run the migration again."
        )


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0008_verify_visibility"),
    ]

    operations = [
        migrations.RunPython(refuse_even_scales, migrations.RunPython.noop),
        migrations.RemoveConstraint(
            model_name="project",
            name="project_likert_points_range",
        ),
        migrations.AddConstraint(
            model_name="project",
            constraint=models.CheckConstraint(
                condition=models.Q(("likert_points__in", [3, 5, 7, 9, 11])), name="project_likert_points_odd_range"
            ),
        ),
    ]
