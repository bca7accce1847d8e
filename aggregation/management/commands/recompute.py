from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from aggregation import services
from projects.models import Project


class Command(BaseCommand):
    help = (
        "Recompute aggregates now, in this process: weights, every item, agreement, plots, progress, suggestion "
        "figures and handoff. Without a project, every project; with --stale, only what reconciliation would find."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("projects", nargs="*", help="project slugs or ids (default: all)")
        parser.add_argument("--stale", action="store_true", help="only stale items and projects")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["stale"]:
            self._stale()
            return
        projects = list(Project.objects.order_by("pk")) if not options["projects"] else self._named(options["projects"])
        for project in tqdm(projects, unit="project", desc="recomputing", disable=len(projects) < 2):
            done = services.project_aggregates_recompute(project_id=project.pk)
            if not done["items"]:
                # Weights unchanged: the run skipped items, but a command asked for everything.
                done["items"] = services.item_aggregates_recompute(project_id=project.pk)
            moved = done["weights_moved"]
            self.stdout.write(f"{project.slug}: {done['items']} item aggregates; weights moved: {moved}")

    def _named(self, values: list[str]) -> list[Project]:
        projects = []
        for value in values:
            project = Project.objects.filter(slug=value).first()
            if project is None and value.isdigit():
                project = Project.objects.filter(pk=int(value)).first()
            if project is None:
                raise CommandError(f"No project with slug or id {value!r}.")
            projects.append(project)
        return projects

    def _stale(self) -> None:
        stale_items = services.stale_items_list()
        total = sum(len(ids) for ids in stale_items.values())
        with tqdm(total=total, unit="item", desc="stale items") as bar:
            for project_id, item_ids in stale_items.items():
                for start in range(0, len(item_ids), 5000):
                    chunk = item_ids[start : start + 5000]
                    services.item_aggregates_recompute(project_id=project_id, item_ids=chunk)
                    bar.update(len(chunk))
        projects = sorted(set(services.stale_projects_list()) | set(stale_items))
        for project_id in tqdm(projects, unit="project", desc="stale projects", disable=len(projects) < 2):
            services.project_aggregates_recompute(project_id=project_id)
        self.stdout.write(f"{total} stale items and {len(projects)} stale projects recomputed")
