"""The people page: a lead invites by username or e-mail (a new account gets a signed, expiring link where the
invitee sets a password and lands in the project; mailed when e-mail is configured), changes roles (never the last
lead away), removes a member (their labels stay, listed under former members), sees each member's progress; 404 for
annotators and outsiders."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from annotation.models import Annotation
from annotation.queue.services import assignment_claim_next
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from projects.models import Membership


def _people(project) -> str:
    return f"/projects/{project.pk}/people/"


def test_annotators_and_outsiders_get_404(project, annotator_client, outsider_client):
    for client in (annotator_client, outsider_client):
        assert client.get(_people(project)).status_code == 404
        assert client.post(_people(project), {"address": "x@example.org", "role": "lead"}).status_code == 404
        assert client.post(f"/projects/{project.pk}/people/1/role/", {"role": "lead"}).status_code == 404
        assert client.post(f"/projects/{project.pk}/people/1/remove/").status_code == 404
    assert not get_user_model().objects.filter(email="x@example.org").exists()


def test_an_invitation_by_e_mail_gives_a_link_that_sets_a_password_and_joins(project, lead_client, settings):
    settings.EMAIL_HOST = ""
    response = lead_client.post(_people(project), {"address": "Ada@Example.org", "role": "annotator"})

    assert response.status_code == 200
    page = response.content.decode()
    found = re.search(r'value="(http://testserver/accounts/reset/[^"]+)" id="invitation-link"', page)
    assert found
    invitee = get_user_model().objects.get(email="Ada@Example.org")
    assert invitee.username == "Ada"
    assert not invitee.has_usable_password()
    assert Membership.objects.get(project=project, user=invitee).role == "annotator"
    assert "invited, no password yet" in lead_client.get(_people(project)).content.decode()

    browser = Client()
    form_page = browser.get(found.group(1).removeprefix("http://testserver"), follow=True)
    assert form_page.status_code == 200
    done = browser.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "a long fresh pass 42", "new_password2": "a long fresh pass 42"},
        follow=True,
    )
    assert project.name in done.content.decode()
    invitee.refresh_from_db()
    assert invitee.has_usable_password()
    assert browser.get(found.group(1).removeprefix("http://testserver"), follow=True).context["validlink"] is False


def test_with_mail_configured_the_invitation_is_mailed_after_commit(
    project, lead_client, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_HOST = "mail.example.org"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    with django_capture_on_commit_callbacks(execute=True):
        lead_client.post(_people(project), {"address": "bo@example.org", "role": "lead"})

    (message,) = mail.outbox
    assert message.to == ["bo@example.org"]
    assert "/accounts/reset/" in message.body


def test_an_existing_account_joins_without_a_link(project, lead_client, outsider):
    page = lead_client.post(_people(project), {"address": "outsider", "role": "lead"}).content.decode()

    assert "signs in with their existing password" in page
    assert Membership.objects.get(project=project, user=outsider).role == "lead"


def test_a_bad_address_is_refused_and_changes_nothing(project, lead_client):
    before = get_user_model().objects.count()
    response = lead_client.post(_people(project), {"address": "not@an@address", "role": "annotator"})

    assert response.status_code == 400
    assert "is not an e-mail address" in response.content.decode()
    assert get_user_model().objects.count() == before


def test_roles_change_but_the_last_lead_stays(project, lead_client, lead, annotator):
    lead_client.post(f"/projects/{project.pk}/people/{annotator.pk}/role/", {"role": "lead"})
    assert Membership.objects.get(project=project, user=annotator).role == "lead"
    lead_client.post(f"/projects/{project.pk}/people/{annotator.pk}/role/", {"role": "annotator"})

    refused = lead_client.post(f"/projects/{project.pk}/people/{lead.pk}/role/", {"role": "annotator"}, follow=True)

    assert "A project keeps at least one lead" in refused.content.decode()
    assert Membership.objects.get(project=project, user=lead).role == "lead"


def test_a_removed_member_labels_stay_as_a_former_members(project, lead_client, annotator):
    item = assignment_claim_next(project=project, annotator=annotator).item
    values = [{"response": p, "criterion": "overall", "mu": 500, "nu": 100} for p in (0, 1)]
    annotation_save(project=project, item=item, annotator=annotator, save=SaveRequest(values=values))
    page = lead_client.get(_people(project)).content.decode()
    row = page.split(f'id="member-{annotator.pk}"')[1].split("</tr>")[0]
    assert "<td>1</td>" in row

    confirm = lead_client.get(f"/projects/{project.pk}/people/{annotator.pk}/remove/").content.decode()
    assert "What is kept" in confirm
    assert Membership.objects.filter(project=project, user=annotator).exists()
    lead_client.post(f"/projects/{project.pk}/people/{annotator.pk}/remove/")

    assert not Membership.objects.filter(project=project, user=annotator).exists()
    assert Annotation.objects.filter(item=item, annotator=annotator).exists()
    review = lead_client.get(f"/projects/{project.pk}/items/{item.pk}/review/").content.decode()
    assert 'annotator <span class="badge warn">former member</span>' in review
    page = lead_client.get(_people(project)).content.decode()
    assert 'id="former-members"' in page
    assert "annotator: 1 label" in page


@pytest.mark.parametrize("extra", [0, 5])
def test_the_page_reads_in_a_fixed_number_of_queries(project, lead_client, extra, django_assert_max_num_queries):
    from tests.factories import MembershipFactory, UserFactory

    for n in range(extra):
        MembershipFactory(project=project, user=UserFactory(username=f"m{n}"), role="annotator")
    with django_assert_max_num_queries(14):
        assert lead_client.get(_people(project)).status_code == 200
