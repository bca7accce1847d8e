"""On PostgreSQL the queue's scan, its re-check and the save's row lock run SQL compiled once per process: the same
values give the same rows as the ORM queryset they come from, whatever the values re-bound (ids, times, lists of
different lengths), and a value the SQL would only see transformed is refused instead of baked in."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.judgment import queue_offset
from annotation.models import Assignment
from annotation.queue import services as claim_services
from annotation.queue.services import assignment_claim_next
from annotation.saving import SaveRequest
from annotation.services import annotation_save
from config import compiled_sql
from projects.models import Item

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="the compiled path runs on PostgreSQL only")


def _named(project, annotator, now, exclude, count=0):
    return {
        "project_id": project.pk,
        "offset": queue_offset(seed=project.seed, annotator_id=annotator.pk),
        "annotator_id": annotator.pk,
        "now": now,
        "exclude": exclude,
        "count": count,
        "room": project.overlap - count,
    }


def _scan_both_ways(named):
    """Both halves of the queue (at and above the annotator's offset, then below), compiled and through the ORM."""
    found = []
    for key, build in (("upper", claim_services._scan_upper), ("lower", claim_services._scan_lower)):
        rows = compiled_sql.rows(Item, ("test scan", key), build, named)
        orm = list(build(named))
        assert [(i.pk, i.mine_id, i.labelled) for i in rows] == [(i.pk, i.mine_id, i.labelled) for i in orm]
        found += [i.pk for i in rows]
    return found


def test_the_scan_gives_the_orms_rows_for_any_values(project, annotator, annotator2):
    project.overlap = 1
    project.save(update_fields=["overlap"])
    now = timezone.now()
    everything = _scan_both_ways(_named(project, annotator, now, []))
    assert len(everything) > 2
    # Another annotator's live claim takes an item's only slot; once it has expired, the item is back.
    claim = assignment_claim_next(project=project, annotator=annotator2)
    named = _named(project, annotator, now, [])
    assert claim.item_id in everything
    assert claim.item_id not in _scan_both_ways(named)
    later = {**named, "now": claim.expires_at + timedelta(seconds=1)}
    assert _scan_both_ways(later) == everything
    # Lists of other lengths are other shapes: each agrees with the ORM.
    for excluded in ([everything[0]], everything[:2], []):
        assert not set(excluded) & set(_scan_both_ways({**later, "exclude": excluded}))


def test_the_claim_and_the_save_agree_between_both_paths(project, annotator, monkeypatch):
    compiled = assignment_claim_next(project=project, annotator=annotator)
    Assignment.objects.filter(pk=compiled.pk).delete()
    monkeypatch.setattr(compiled_sql, "enabled", lambda: False)
    orm = assignment_claim_next(project=project, annotator=annotator)
    assert orm.item_id == compiled.item_id
    assert [r.pk for r in compiled.item.responses.all()] == [r.pk for r in orm.item.responses.all()]
    monkeypatch.undo()
    values = [{"response": r.position, "criterion": "overall", "mu": 500, "nu": 200} for r in orm.item.responses.all()]
    annotation_save(project=project, item=orm.item, annotator=annotator, save=SaveRequest(values=values))
    assert Assignment.objects.get(pk=orm.pk).status == Assignment.Status.DONE


def test_a_value_the_sql_sees_transformed_is_refused():
    with pytest.raises(RuntimeError):
        compiled_sql.bound_sql(
            ("test transformed",), lambda named: Item.objects.filter(pk=named["item_id"] + 1), {"item_id": 5}
        )
