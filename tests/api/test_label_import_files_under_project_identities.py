"""Label import files every name under the project's own imported identity, never under an account by its name:
the same file imports twice (no-ops, or revisions when a label changed) and into two projects, an account named like
a file's annotator is never touched, members are used only when the import says so, and a lead links an identity to
a real member."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from aggregation.exports.stream import ExportOptions, export_lines
from annotation.imports.identities import imported_annotator_link
from annotation.imports.labels import labels_import
from annotation.models import Annotation, AnnotationRevision
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.imports.items import ImportRejected
from projects.models import ImportedAnnotator, Membership
from tests.factories import ItemFactory


def _row(item, annotator: str, first=(0.6, 0.2)) -> str:
    return json.dumps(
        {
            "item": item.external_id,
            "annotator": annotator,
            "mode": "ifs",
            "values": [{"position": 0, "mu": first[0], "nu": first[1]}, {"position": 1, "mu": 0.1, "nu": 0.7}],
        }
    )


def _label_in_penumbra(project, item, annotator, first: tuple[int, int], second: tuple[int, int]) -> None:
    """A label saved through Penumbra's own annotation page: (mu, nu) of each response, as the page sends them."""
    annotation_save(
        project=project,
        item=item,
        annotator=annotator,
        save=SaveRequest(
            values=[
                {"response": 0, "criterion": "overall", "mu": first[0], "nu": first[1]},
                {"response": 1, "criterion": "overall", "mu": second[0], "nu": second[1]},
            ]
        ),
    )


@pytest.fixture
def items(project):
    return list(project.items.order_by("id"))


def test_the_same_file_imported_twice_changes_nothing_and_says_so(project, items):
    lines = [_row(items[0], "alice"), _row(items[1], "alice"), _row(items[0], "bob")]

    first = labels_import(project=project, lines=lines)
    second = labels_import(project=project, lines=lines)

    assert (first.created, first.identities_created) == (3, 2)
    assert (second.created, second.unchanged, second.revised, second.identities_created) == (0, 3, 0, 0)
    assert Annotation.objects.filter(project=project).count() == 3
    assert AnnotationRevision.objects.filter(annotation__project=project).count() == 3


def test_a_changed_label_in_a_second_import_is_a_revision(project, items):
    labels_import(project=project, lines=[_row(items[0], "alice"), _row(items[1], "alice")])

    again = labels_import(project=project, lines=[_row(items[0], "alice", first=(0.9, 0.0)), _row(items[1], "alice")])

    assert (again.created, again.revised, again.unchanged) == (0, 1, 1)
    annotation = Annotation.objects.get(item=items[0])
    assert annotation.revision_count == 2
    assert annotation.values.get(response__position=0).mu == 900


def test_two_projects_hold_the_same_names_apart(project, other_project, items):
    other_item = other_project.items.order_by("id").first()
    ItemFactory(project=other_project)  # the other project's items have two responses, like these

    labels_import(project=project, lines=[_row(items[0], "alice")])
    labels_import(project=other_project, lines=[_row(other_item, "alice")])

    ours, theirs = (ImportedAnnotator.objects.get(project=p, external_id="alice") for p in (project, other_project))
    assert ours.user_id != theirs.user_id
    assert Annotation.objects.get(item=items[0]).annotator_id == ours.user_id
    assert not Membership.objects.filter(project=other_project, user=ours.user).exists()


def test_a_shadow_user_cannot_log_in_and_owns_no_account_name(project, items, client):
    get_user_model().objects.create_user(username="alice", password="a-long-password-1")
    labels_import(project=project, lines=[_row(items[0], "alice")])

    shadow = ImportedAnnotator.objects.get(project=project, external_id="alice").user
    assert shadow.get_username() != "alice"
    assert not shadow.is_active
    assert not shadow.has_usable_password()
    registered = get_user_model().objects.get(username="alice")
    assert not Membership.objects.filter(project=project, user=registered).exists()
    assert not Annotation.objects.filter(annotator=registered).exists()


def test_another_projects_account_name_is_an_identity_here_not_that_account(project, other_project, items):
    result = labels_import(project=project, lines=[_row(items[0], "elsewhere")])

    assert result.created == 1
    elsewhere = get_user_model().objects.get(username="elsewhere")
    assert not Membership.objects.filter(project=project, user=elsewhere).exists()
    assert Annotation.objects.get(item=items[0]).annotator != elsewhere


def test_a_lead_or_member_is_used_only_when_the_import_allows_it(project, items, lead, annotator):
    labels_import(project=project, lines=[_row(items[0], "lead"), _row(items[0], "annotator")])
    assert not Annotation.objects.filter(annotator__in=[lead, annotator]).exists()

    labels_import(project=project, lines=[_row(items[1], "lead")], allow_leads=True)
    labels_import(project=project, lines=[_row(items[2], "annotator")], allow_members=True)
    assert Annotation.objects.get(item=items[1]).annotator == lead
    assert Annotation.objects.get(item=items[2]).annotator == annotator


def test_a_label_made_in_penumbra_is_never_overwritten(project, items, annotator):
    _label_in_penumbra(project, items[0], annotator, (500, 100), (100, 500))

    with pytest.raises(ImportRejected) as rejected:
        labels_import(project=project, lines=[_row(items[0], "annotator")], allow_members=True)

    assert "already labelled this item in Penumbra" in rejected.value.errors[0].message
    assert Annotation.objects.get(item=items[0]).values.get(response__position=0).mu == 500


def test_linking_moves_the_labels_and_later_imports_file_under_the_member(project, items, annotator):
    lines = [_row(items[0], "alice"), _row(items[1], "alice")]
    labels_import(project=project, lines=lines)
    identity = ImportedAnnotator.objects.get(project=project, external_id="alice")

    imported_annotator_link(project=project, identity_id=identity.pk, member_id=annotator.pk)

    assert set(Annotation.objects.filter(annotator=annotator).values_list("item_id", flat=True)) == {
        items[0].pk,
        items[1].pk,
    }
    assert not Membership.objects.filter(project=project, user=identity.user).exists()
    again = labels_import(project=project, lines=lines)
    assert (again.created, again.unchanged) == (0, 2)


def test_linking_is_refused_when_both_labelled_the_same_item(project, items, annotator):
    labels_import(project=project, lines=[_row(items[0], "alice"), _row(items[0], "annotator")], allow_members=True)
    identity = ImportedAnnotator.objects.get(project=project, external_id="alice")

    with pytest.raises(ValidationError, match="both labelled"):
        imported_annotator_link(project=project, identity_id=identity.pk, member_id=annotator.pk)

    assert Annotation.objects.filter(annotator=identity.user).count() == 1


def test_the_api_passes_the_flags(
    project, items, lead_client, lead, django_capture_on_commit_callbacks, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    upload = _row(items[0], "lead").encode()
    url = f"/api/projects/{project.pk}/labels/import/"

    with django_capture_on_commit_callbacks(execute=True):
        as_identity = lead_client.post(url, {"file": SimpleUploadedFile("l.jsonl", upload)})
    with django_capture_on_commit_callbacks(execute=True):
        as_lead = lead_client.post(
            url, {"file": SimpleUploadedFile("l.jsonl", _row(items[1], "lead").encode()), "allow_leads": "true"}
        )

    first = lead_client.get(as_identity.json()["url"]).json()
    second = lead_client.get(as_lead.json()["url"]).json()
    assert first["status"] == second["status"] == "done", (first, second)
    assert first["result"]["identities_created"] == 1
    assert Annotation.objects.filter(annotator=lead).count() == 1


def test_a_shadow_cannot_be_made_a_member_or_invited(project, other_project, items):
    from projects.services import member_invite, membership_set

    labels_import(project=project, lines=[_row(items[0], "alice")])
    shadow = ImportedAnnotator.objects.get(project=project).user

    with pytest.raises(ValidationError, match="placeholder"):
        membership_set(project=other_project, user=shadow, role=Membership.Role.LEAD)
    with pytest.raises(ValidationError, match="placeholder"):
        member_invite(project=other_project, username=shadow.get_username(), role=Membership.Role.ANNOTATOR)
    assert not Membership.objects.filter(project=other_project, user=shadow).exists()


def test_the_annotations_export_names_imported_annotators_as_their_file_did(project, items, annotator):
    labels_import(project=project, lines=[_row(items[0], "alice"), _row(items[1], "bob")])
    _label_in_penumbra(project, items[2], annotator, (500, 200), (100, 700))

    rows = [json.loads(line) for line in export_lines(project=project, options=ExportOptions(format="annotations"))]

    assert sorted(row["annotator"] for row in rows) == sorted(["alice", "bob", annotator.username])
