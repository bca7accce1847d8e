from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from projects.management.commands.import_items import project_from_argument
from projects.models import Membership
from projects.people import invitation_path
from projects.services import member_invite


class Command(BaseCommand):
    help = (
        "Add a member to a project, creating the account if needed; a new account gets an invitation link to set "
        "its password (valid for PASSWORD_RESET_TIMEOUT, 3 days by default)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug or id")
        parser.add_argument("username")
        parser.add_argument("--role", choices=Membership.Role.values, default=Membership.Role.ANNOTATOR)
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="where people reach Penumbra, for the invitation link"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        project = project_from_argument(options["project"])
        try:
            user = member_invite(project=project, username=options["username"], role=options["role"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(self.style.SUCCESS(f"{user.get_username()} is {options['role']} of {project.name!r}."))
        path = invitation_path(user)
        if path is None:
            self.stdout.write("They log in with their existing password.")
            return
        self.stdout.write("Send them this link to choose a password:")
        self.stdout.write(options["base_url"].rstrip("/") + path)
