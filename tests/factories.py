"""factory_boy factories. Items get their blind and queue draws from the same hash the importer uses."""

from __future__ import annotations

import functools

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password

from projects import blind
from projects.models import Criterion, Item, Membership, Project, Response, Suggestion, SuggestionValue

PASSWORD = "correct horse battery"


@functools.cache
def _password_hash() -> str:
    # One real hash per test process, shared by every user: Django's PBKDF2 costs a good part of a second, and
    # each persona of each test paid it. A real hash still, so servers the tests start can check it.
    return make_password(PASSWORD)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.LazyFunction(_password_hash)


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Project {n}")
    slug = factory.Sequence(lambda n: f"project-{n}")
    seed = 1234
    minimum_blind_sample = 0

    @factory.post_generation
    def criteria(self, create: bool, extracted: list[tuple[str, float]] | None, **kwargs: object) -> None:
        if not create:
            return
        for position, (name, weight) in enumerate(extracted or [("overall", 1.0)]):
            Criterion.objects.create(project=self, name=name, weight=weight, position=position)


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = Membership.Role.ANNOTATOR


class ItemFactory(factory.django.DjangoModelFactory):
    """An item with two responses; ``is_blind`` defaults to the hash rule at the project's rate."""

    class Meta:
        model = Item
        skip_postgeneration_save = True

    project = factory.SubFactory(ProjectFactory)
    external_id = factory.Sequence(lambda n: f"item-{n}")
    prompt = factory.Sequence(lambda n: f"Question {n}: which answer is better?")
    blind_draw = factory.LazyAttribute(lambda o: blind.uniform_draw(seed=o.project.seed, external_id=o.external_id))
    queue_key = factory.LazyAttribute(lambda o: blind.queue_key(seed=o.project.seed, external_id=o.external_id))
    is_blind = factory.LazyAttribute(lambda o: o.blind_draw < o.project.blind_rate)

    @factory.post_generation
    def responses(self, create: bool, extracted: list[str] | None, **kwargs: object) -> None:
        if not create:
            return
        texts = extracted or [f"First answer to {self.external_id}.", f"Second, longer answer to {self.external_id}."]
        for position, text in enumerate(texts):
            Response.objects.create(item=self, position=position, text=text, model_name=f"model-{position}")


class SuggestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Suggestion
        skip_postgeneration_save = True

    item = factory.SubFactory(ItemFactory)
    preferred_position = 1
    rationale = "The second answer is more complete."
    model_name = "test-llm"
    source = Suggestion.Source.IMPORTED

    @factory.post_generation
    def values(self, create: bool, extracted: list[tuple[int, int]] | None, **kwargs: object) -> None:
        """(μ, ν) per-mille per response position, e.g. [(200, 600), (800, 100)]."""
        if not create or not extracted:
            return
        for response, (mu, nu) in zip(self.item.responses.order_by("position"), extracted, strict=True):
            SuggestionValue.objects.create(suggestion=self, response=response, mu=mu, nu=nu)


def demo_project_create(*, lead, annotator, annotator2) -> Project:
    """The conftest's ``project``: an IFS project in blind_sample display, its lead, two annotators and six items.

    A function as well as a fixture, so that module-scoped worlds (built once, shared by read-only cases) start
    from the same project as everything else.
    """
    project = ProjectFactory(name="Demo", blind_rate=0.2)
    MembershipFactory(project=project, user=lead, role=Membership.Role.LEAD)
    MembershipFactory(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    MembershipFactory(project=project, user=annotator2, role=Membership.Role.ANNOTATOR)
    ItemFactory.create_batch(6, project=project)
    return project


def may_create_projects(user):
    """Grant ``user`` the right to create projects (PROJECT_CREATORS lets staff and holders of projects.add_project)."""
    from django.contrib.auth.models import Permission

    user.user_permissions.add(Permission.objects.get(content_type__app_label="projects", codename="add_project"))
    return user
