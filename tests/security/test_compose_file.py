"""docker-compose.yml parses and keeps the reliability promises: restarts, health checks, a one-shot migration."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def _command_text(command: str | list[str]) -> str:
    """A service's command as one string, written as a list or as a string (joining a string with spaces would
    split it into characters, where no word can be found)."""
    return command if isinstance(command, str) else " ".join(command)


def test_long_running_services_restart_and_report_health():
    services = _compose()["services"]
    for name in ("postgres", "redis", "web", "worker", "beat"):
        assert services[name]["restart"] == "unless-stopped", name
        assert services[name]["healthcheck"]["test"], name


def test_migrations_run_once_before_the_app_starts():
    services = _compose()["services"]
    assert services["migrate"]["restart"] == "no"
    assert services["migrate"]["command"][-2:] == ["migrate", "--noinput"]
    for name in ("web", "worker", "beat"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert "migrate" not in _command_text(services[name]["command"]), name


def test_the_migration_check_sees_a_string_command_and_a_list_command():
    assert "migrate" in _command_text('sh -c "python manage.py migrate --noinput && gunicorn config.wsgi"')
    assert "migrate" in _command_text(["python", "manage.py", "migrate"])


def test_redis_keeps_its_data_in_a_volume():
    compose = _compose()
    assert any(volume.endswith(":/data") for volume in compose["services"]["redis"]["volumes"])
    assert "redisdata" in compose["volumes"]


def test_the_worker_leaves_out_the_steps_that_crash_on_a_broker_outage():
    command = _compose()["services"]["worker"]["command"]
    assert {"--without-gossip", "--without-mingle", "--without-heartbeat"} <= set(command)


def test_dockerignore_keeps_local_state_out_of_the_image():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip()}
    assert {".venv", "var", ".git", "test-artifacts", ".pytest_cache"} <= ignored
