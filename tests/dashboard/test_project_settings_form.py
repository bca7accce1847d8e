"""Settings page: the service's rules shown per field in place; a refused form changes nothing."""

import pytest
from django.urls import reverse
from django.utils import timezone

from aggregation.forms import ProjectSettingsForm
from projects.models import Membership, Project
from tests.factories import UserFactory


def _settings_post(project: Project, **overrides) -> dict:
    """The form as the page renders it (every field at its stored value), with ``overrides``."""
    initial = ProjectSettingsForm(project=project).initial
    data = {"form": "settings", **{name: value for name, value in initial.items() if value is not None}}
    data.update(overrides)
    return data


@pytest.fixture
def settings_url(project):
    return reverse("project_settings", kwargs={"project_id": project.pk})


def test_valid_change_is_saved(lead_client, project, settings_url):
    response = lead_client.post(settings_url, _settings_post(project, overlap=5, name="Renamed"))
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.overlap, project.name) == (5, "Renamed")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("blind_rate", "1.5", "Expected a number from 0 to 1."),
        ("likert_points", "6", "Expected an odd number"),
        ("overlap", "0", "Expected a whole number from 1 to 100."),
        ("weight_consistency", "0.9", "must sum to 1"),
        ("overlap", "three", "Enter a whole number."),
    ],
)
def test_bad_value_shows_its_field_error_and_changes_nothing(lead_client, project, settings_url, field, value, message):
    before = Project.objects.values().get(pk=project.pk)
    response = lead_client.post(settings_url, _settings_post(project, name="Should not stick", **{field: value}))
    assert response.status_code == 400
    form = response.context["settings_form"]
    assert any(message in error for error in form.errors[field])
    html = response.content.decode()
    assert f'id="id_{field}_error"' in html  # shown next to the field it belongs to
    assert Project.objects.values().get(pk=project.pk) == before


def test_blind_rate_is_refused_once_labelling_has_started(lead_client, project, settings_url):
    Project.objects.filter(pk=project.pk).update(labelling_started_at=timezone.now())
    project.refresh_from_db()
    response = lead_client.post(settings_url, _settings_post(project, blind_rate="0.5"))
    assert response.status_code == 400
    assert "a suggestion that was seen cannot be unseen" in " ".join(
        response.context["settings_form"].errors["blind_rate"]
    )
    project.refresh_from_db()
    assert project.blind_rate == 0.2


def test_untouched_blind_rate_does_not_block_other_changes_after_labelling(lead_client, project, settings_url):
    Project.objects.filter(pk=project.pk).update(labelling_started_at=timezone.now())
    project.refresh_from_db()
    response = lead_client.post(settings_url, _settings_post(project, overlap=4))
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.overlap == 4


def test_htmx_post_returns_the_form_with_errors_in_place(lead_client, project, settings_url):
    response = lead_client.post(settings_url, _settings_post(project, blind_rate="2"), HTTP_HX_REQUEST="true")
    html = response.content.decode().strip()
    assert response.status_code == 200  # HTMX swaps 2xx only
    assert html.startswith('<form id="settings-form"')
    assert "Expected a number from 0 to 1." in html


def test_criteria_weights_must_sum_to_one(lead_client, project, settings_url):
    response = lead_client.post(settings_url, {"form": "criteria", "criteria": "fluency: 0.5\nsafety: 0.2"})
    assert response.status_code == 400
    assert "must sum to 1" in " ".join(response.context["criteria_form"].errors["criteria"])
    assert list(project.criteria.values_list("name", flat=True)) == ["overall"]


def test_criteria_line_without_weight_is_named(lead_client, project, settings_url):
    response = lead_client.post(settings_url, {"form": "criteria", "criteria": "fluency: 0.5\nsafety"})
    assert "Line 2" in " ".join(response.context["criteria_form"].errors["criteria"])


def test_criteria_are_replaced_before_labelling(lead_client, project, settings_url):
    response = lead_client.post(settings_url, {"form": "criteria", "criteria": "fluency: 0.4\nsafety: 0.6"})
    assert response.status_code == 302
    assert list(project.criteria.values_list("name", "weight")) == [("fluency", 0.4), ("safety", 0.6)]


def test_existing_user_is_added_as_annotator(lead_client, project, settings_url):
    newcomer = UserFactory(username="newcomer")
    response = lead_client.post(settings_url, {"form": "member", "username": "newcomer", "role": "annotator"})
    assert response.status_code == 302
    assert Membership.objects.get(project=project, user=newcomer).role == Membership.Role.ANNOTATOR


def test_unknown_user_is_refused_by_name(lead_client, project, settings_url):
    count = project.memberships.count()
    response = lead_client.post(settings_url, {"form": "member", "username": "nobody", "role": "lead"})
    assert response.status_code == 400
    assert "No account is named 'nobody'." in response.context["member_form"].errors["username"]
    assert project.memberships.count() == count


def test_weights_show_four_digits_and_the_shown_form_saves_unchanged(lead_client, project, settings_url):
    """1/3 reads 0.3333 in its field; the form sent back as shown keeps the stored thirds (their sum stays 1),
    while a typed 0.3333 next to two others that do not make 1 is still refused."""
    html = lead_client.get(settings_url).content.decode()
    assert 'value="0.3333"' in html
    assert "0.33333" not in html
    form = ProjectSettingsForm(project=project)
    shown = {name: form[name].value() for name in ("weight_consistency", "weight_expertise", "weight_agreement")}
    shown = {name: form.fields[name].prepare_value(value) for name, value in shown.items()}
    assert shown == {"weight_consistency": "0.3333", "weight_expertise": "0.3333", "weight_agreement": "0.3333"}

    response = lead_client.post(settings_url, _settings_post(project, overlap=4, **shown))
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.overlap, project.weight_consistency, project.weight_agreement) == (4, 1 / 3, 1 / 3)

    refused = lead_client.post(
        settings_url,
        _settings_post(
            project, weight_consistency="0.3", **{"weight_expertise": "0.3333", "weight_agreement": "0.3333"}
        ),
    )
    assert "must sum to 1" in refused.content.decode()
