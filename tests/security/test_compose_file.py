"""docker-compose.yml parses and keeps the reliability promises: restarts, health checks, a one-shot migration."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tests.settings_reference import documented_settings

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


# The stack an operator runs: settings from .env, secrets nowhere else, TLS at the proxy, nothing else published.

APP_SERVICES = ("migrate", "web", "worker", "beat")
#: What the stack's own images read from the environment (the app's settings are docs/configuration.md's).
IMAGE_SETTINGS = {"postgres": {"POSTGRES_PASSWORD"}, "redis": {"REDIS_PASSWORD"}, "proxy": {"SITE_ADDRESS"}}


def _documented_settings() -> set[str]:
    """Every variable of the configuration reference an operator sets (its tests-only rows left out)."""
    return documented_settings(tests_only=False)


def _env_example() -> dict[str, str]:
    """.env.example's variables, commented-out defaults included, with their values."""
    found = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        match = re.match(r"#? ?([A-Z][A-Z0-9_]+)=(.*)$", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def _interpolated(value: str) -> set[str]:
    return set(re.findall(r"\$\{([A-Z][A-Z0-9_]+)", value))


def test_the_example_env_lists_every_documented_setting():
    documented = _documented_settings()
    assert {"SECRET_KEY", "ALLOWED_HOSTS", "JOB_HEARTBEAT_SECONDS", "EMAIL_HOST"} <= documented  # the parse works
    missing = documented - set(_env_example())
    assert not missing, f".env.example lacks {sorted(missing)}"


def test_every_documented_setting_reaches_every_app_service():
    services = _compose()["services"]
    for name in APP_SERVICES:
        service = services[name]
        # env_file passes all of .env; a fixed environment list is what once left 25 settings behind.
        assert service["env_file"] == ".env", name
        for variable, value in service["environment"].items():
            assert variable in _documented_settings(), (name, variable)
            assert _interpolated(str(value)) <= set(_env_example()), (name, variable, value)


def test_each_image_gets_the_settings_it_reads_from_env():
    services = _compose()["services"]
    example = _env_example()
    for name, variables in IMAGE_SETTINGS.items():
        environment = services[name]["environment"]
        for variable in variables:
            assert variable in example, variable
            assert _interpolated(str(environment[variable])) == {variable}, (name, variable)


def test_secrets_come_from_env_and_are_required():
    compose_text = (ROOT / "docker-compose.yml").read_text()
    services = _compose()["services"]
    app = services["web"]["environment"]
    for secret in ("SECRET_KEY", "POSTGRES_PASSWORD", "REDIS_PASSWORD"):
        # ${NAME:?message}: compose refuses to start without it instead of running on a default.
        assert re.search(r"\$\{" + secret + r":\?", compose_text), secret
        assert _env_example()[secret] == "", f"{secret} must not ship with a value"
    assert "${POSTGRES_PASSWORD" in app["DATABASE_URL"]
    assert app["REDIS_URL"].startswith("redis://:${REDIS_PASSWORD")
    assert "--requirepass" in " ".join(services["redis"]["command"])
    assert "penumbra:penumbra@" not in compose_text  # the password once written into the file


def test_only_the_proxy_is_published():
    services = _compose()["services"]
    published = {name: service.get("ports", []) for name, service in services.items() if service.get("ports")}
    assert published == {"proxy": ["80:80", "443:443"]}
    # web is reachable inside the stack alone: X-Forwarded-Proto can only have come from the proxy.
    assert services["web"]["environment"]["SECURE_PROXY_SSL_HEADER"] == "1"
    assert services["web"]["environment"]["TRUSTED_PROXY_COUNT"].startswith("${TRUSTED_PROXY_COUNT")
    assert _env_example()["TRUSTED_PROXY_COUNT"] == "1"  # Caddy alone in front


def _caddy_sites(text: str) -> dict[str, list[list[str]]]:
    """A Caddyfile's site blocks: {address: [directive tokens, ...]} (comments and the global block left out)."""
    sites: dict[str, list[list[str]]] = {}
    current: list[list[str]] | None = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.endswith("{") and current is None:
            current = sites.setdefault(line[:-1].strip(), [])
        elif line == "}":
            current = None
        elif current is not None:
            current.append(line.split())
    return sites


def test_the_proxy_terminates_tls_for_the_site_address_and_forwards_to_web():
    services = _compose()["services"]
    proxy = services["proxy"]
    assert proxy["image"].startswith("caddy:")
    assert "./Caddyfile:/etc/caddy/Caddyfile:ro" in proxy["volumes"]
    assert proxy["environment"]["SITE_ADDRESS"] == "${SITE_ADDRESS:-localhost}"
    sites = _caddy_sites((ROOT / "Caddyfile").read_text())
    # One site, named by SITE_ADDRESS with localhost (Caddy's local certificate) by default; no http:// prefix, which
    # would turn automatic HTTPS off.
    assert list(sites) == ["{$SITE_ADDRESS:localhost}"]
    assert ["reverse_proxy", "web:8000"] in sites["{$SITE_ADDRESS:localhost}"]
    assert services["web"]["expose"] == ["8000"]
    assert _env_example()["SITE_ADDRESS"] == "localhost"


def test_one_image_is_built_once_and_reused():
    services = _compose()["services"]
    built = [name for name, service in services.items() if "build" in service]
    assert built == ["migrate"]  # the first to run
    assert {services[name]["image"] for name in APP_SERVICES} == {"penumbra:local"}


def _seconds(duration: str) -> float:
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    return sum(float(n) * units[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", duration))


def test_a_redeploy_gives_running_jobs_longer_than_their_heartbeat():
    from django.conf import settings

    services = _compose()["services"]
    grace = _seconds(services["worker"]["stop_grace_period"])
    assert grace > settings.JOB_HEARTBEAT_SECONDS
    assert grace > settings.JOB_STALE_SECONDS  # past the point where a silent job is picked up again anyway
    for name in ("web", "beat"):
        assert _seconds(services[name]["stop_grace_period"]) >= 10, name


def test_the_web_command_takes_its_settings_from_the_gunicorn_config():
    assert _compose()["services"]["web"]["command"] == ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi"]


def test_env_stays_out_of_git_and_the_image():
    assert ".env" in (ROOT / ".gitignore").read_text().split()
    assert ".env" in (ROOT / ".dockerignore").read_text().split()
