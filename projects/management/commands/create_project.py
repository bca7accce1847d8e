from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from projects.models import Membership, Project
from projects.services import membership_set, project_create


class Command(BaseCommand):
    help = "Create a project with a lead (an existing user) and optional annotators."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--lead", required=True, help="username of the lead")
        parser.add_argument("--annotator", action="append", default=[], help="username; repeat for more")
        parser.add_argument("--mode", choices=Project.Mode.values, default=Project.Mode.IFS)
        parser.add_argument("--overlap", type=int, default=3)
        parser.add_argument("--display", choices=Project.SuggestionDisplay.values, default="blind_sample")

    def handle(self, *args: Any, **options: Any) -> None:
        users = get_user_model().objects
        try:
            lead = users.get(username=options["lead"])
            annotators = [users.get(username=name) for name in options["annotator"]]
        except users.model.DoesNotExist as exc:
            raise CommandError(f"Unknown user: {exc}") from None
        try:
            project = project_create(
                name=options["name"],
                lead=lead,
                mode=options["mode"],
                overlap=options["overlap"],
                suggestion_display=options["display"],
            )
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
        for annotator in annotators:
            membership_set(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
        self.stdout.write(self.style.SUCCESS(f"Created project {project.slug!r} (id {project.pk})."))
