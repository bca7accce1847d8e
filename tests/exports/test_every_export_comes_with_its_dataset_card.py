"""Every export comes with its dataset card: the API serves it (leads only), the command writes README.md beside the
file, and an export job keeps it in its result. The card counts labels by provenance as the database does."""

from __future__ import annotations

import yaml
from django.core.management import call_command

from aggregation.exports.card import export_card_facts
from aggregation.exports.stream import ExportOptions
from aggregation.exports.tasks import export_job_run, export_job_start
from annotation.models import Annotation
from projects.models import Job


def test_the_api_serves_the_card_of_the_export(labelled_project, lead_client):
    response = lead_client.get(f"/api/projects/{labelled_project.pk}/export/card/?format=dpo")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown")
    text = response.content.decode()
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["configs"][0]["data_files"][0]["path"] == f"{labelled_project.slug}-dpo.jsonl"
    assert f"# Dataset Card for {labelled_project.name}" in text
    shown = Annotation.objects.filter(project=labelled_project, suggestion_shown=True).count()
    blind = Annotation.objects.filter(project=labelled_project, suggestion_shown=False).count()
    assert f"| `human_blind` | {blind} |" in text
    assert f"| `human_shown` | {shown} |" in text


def test_the_facts_match_the_stored_figures(labelled_project):
    facts = export_card_facts(project=labelled_project, options=ExportOptions(format="ifs"))
    assert facts.labels == Annotation.objects.filter(project=labelled_project).count()
    assert facts.files == [f"{labelled_project.slug}-ifs.jsonl"]


def test_the_command_writes_readme_beside_the_file(labelled_project, tmp_path):
    output = tmp_path / "dpo.jsonl"
    call_command("export_project", labelled_project.slug, "--output", str(output))
    card = (tmp_path / "README.md").read_text()
    assert card.startswith("---\n")
    assert "## Bias, Risks, and Limitations" in card


def test_an_export_job_keeps_the_card_in_its_result(labelled_project, lead):
    job = export_job_start(project=labelled_project, user=lead, options=ExportOptions(format="soft"))
    export_job_run(job_id=job.pk)
    job = Job.objects.get(pk=job.pk)
    assert job.status == Job.Status.DONE
    assert "# Dataset Card for" in job.result["card"]
