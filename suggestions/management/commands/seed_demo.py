from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from aggregation.services import project_aggregates_recompute
from annotation.models import LabelRequest
from projects.imports.items import items_import
from projects.models import Membership, Project
from projects.services import membership_set, project_create
from suggestions.requests import label_requests_draw
from suggestions.services import longest_response_suggestions

DEMO_SLUG = "demo-long-form-qa"
# The demo seeds every app, so the command sits on the top floor; its data stays with the items it becomes.
DEMO_FILE = Path(__file__).resolve().parents[3] / "projects" / "demo_data" / "prd_lfqa_40.jsonl"
#: The label requests the demo starts with, so a lead can watch calibration, certification and verification fill in
#: as the annotators work (kind, items, by confidence, labels per item). Calibration and certification want
#: blind labels from two annotators on each drawn item; 20 certification items meet the demo's minimum of 20.
#: Verification is drawn first: its verifier is then left out of the blind requests for that item.
DEMO_REQUESTS = (
    (LabelRequest.Kind.VERIFICATION, 6, False, 1),
    (LabelRequest.Kind.CALIBRATION, 20, True, 2),
    (LabelRequest.Kind.CERTIFICATION, 20, False, 2),
)
USERS = (
    ("lead", Membership.Role.LEAD),
    ("annotator1", Membership.Role.ANNOTATOR),
    ("annotator2", Membership.Role.ANNOTATOR),
    # A third person makes a three-method crossover study possible on the demo (annotation.method_study.design).
    ("annotator3", Membership.Role.ANNOTATOR),
)


class Command(BaseCommand):
    help = "Create (or refresh) the demo project: 40 real long-form QA pairs, a lead and three annotators."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--password", default="penumbra-demo", help="password of the demo users")

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        users = {}
        for username, _ in USERS:
            user, _ = user_model.objects.get_or_create(username=username)
            try:
                # The demo obeys the same password rules as everyone else.
                validate_password(options["password"], user)
            except ValidationError as error:
                raise CommandError(f"--password: {' '.join(error.messages)}") from None
            user.set_password(options["password"])
            user.save()
            users[username] = user
        # The demo's lead may create projects of their own (PROJECT_CREATORS: staff and holders of this permission).
        users["lead"].user_permissions.add(
            Permission.objects.get(content_type__app_label="projects", codename="add_project")
        )

        project = Project.objects.filter(slug=DEMO_SLUG).first()
        if project is None:
            project = project_create(
                name="Demo: long-form QA (PRD)",
                lead=users["lead"],
                seed=20240601,
                description=(
                    "Forty real question/answer pairs from the PRD long-form QA set, each with an expert's "
                    "preference as gold. The LLM suggestion is the 'longest-response' baseline: it prefers the "
                    "longer answer, a known weak rule, so watch its blind agreement."
                ),
                guidelines=(
                    "Read the question, then both answers. For each answer, move **support** up for what makes it "
                    "a good answer (correct, complete, helpful) and **opposition** up for what makes it a bad one. "
                    "Leave what you are unsure about as hesitation."
                ),
                overlap=2,
                minimum_blind_sample=10,
            )
            project.slug = DEMO_SLUG
            project.save(update_fields=["slug"])
        for username, role in USERS:
            membership_set(project=project, user=users[username], role=role)

        with DEMO_FILE.open(encoding="utf-8") as handle:
            result = items_import(project=project, lines=handle, on_duplicate="skip")
        suggestions_made = self._baseline_suggestions(project)
        requests = self._label_requests(project)
        # A command ends before any background thread would: compute the figures here.
        transaction.on_commit(lambda: project_aggregates_recompute(project_id=project.pk))

        self.stdout.write(self.style.SUCCESS(f"Demo project {project.name!r} (id {project.pk}): "))
        self.stdout.write(f"  {result.created} items imported, {result.skipped} already there; {suggestions_made}")
        blind = project.items.filter(is_blind=True).count()
        self.stdout.write(f"  blind sample: {blind} of {project.items.count()} items")
        self.stdout.write(f"  {requests}")
        self.stdout.write("  Log in with:")
        for username, role in USERS:
            self.stdout.write(f"    {username:<11} / {options['password']}   ({role})")

    def _baseline_suggestions(self, project: Project) -> str:
        count = longest_response_suggestions(project=project)
        return f"'longest-response' suggestions: {count}"

    def _label_requests(self, project: Project) -> str:
        """Draw the demo's requests once: a refresh leaves the draws (and any answers) as they are."""
        if LabelRequest.objects.filter(project=project).exists():
            counts = LabelRequest.objects.filter(project=project, status=LabelRequest.Status.OPEN).count()
            return f"label requests already drawn ({counts} open)"
        parts = []
        for kind, size, by_confidence, per_item in DEMO_REQUESTS:
            draw = label_requests_draw(
                project=project, kind=kind, size=size, labels_per_item=per_item, by_confidence=by_confidence
            )
            parts.append(f"{kind} {draw.items_drawn} items ({draw.requests} requests)")
        return "label requests: " + ", ".join(parts) + "; an audit follows a handoff"
