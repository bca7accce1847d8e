from csp.decorators import csp_update
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView

from config.openapi import ApiDocsView

# Swagger UI keeps its script in a separate file (the split view), but styles itself with inline styles: only this
# page relaxes style-src.
swagger_ui = csp_update({"style-src": ["'unsafe-inline'"]})(ApiDocsView.as_view(url_name="api-schema"))

handler404 = "config.api_errors.not_found"
# The database briefly gone: 503 with Retry-After (JSON for the API) instead of Django's 500 page.
handler500 = "config.outage.server_error"

urlpatterns = [
    # Browsers ask for /favicon.ico whatever the page's <link rel="icon"> says; answer with the real icon.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("admin/", admin.site.urls),
    # Django's set_language: the account page's language choice, kept in the language cookie (config/language.py).
    path("i18n/", include("django.conf.urls.i18n")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Invitations (manage.py member_add) are Django's password-reset links: a new member chooses a password.
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            post_reset_login=True,
            # Several backends (django-axes first): say which one logs the new member in.
            post_reset_login_backend="config.auth.CachedModelBackend",
            success_url="/",
        ),
        name="password_reset_confirm",
    ),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", swagger_ui, name="api-docs"),
    path("api/", include("projects.api_urls")),
    path("api/", include("annotation.api_urls")),
    path("api/", include("annotation.crowd.api_urls")),
    path("api/", include("annotation.method_study.api_urls")),
    path("api/", include("aggregation.api_urls")),
    path("api/", include("suggestions.api_urls")),
    path("", include("projects.urls")),
    path("", include("annotation.urls")),
    path("", include("annotation.crowd.urls")),
    path("", include("annotation.method_study.urls")),
    path("", include("annotation.notes.urls")),
    path("", include("aggregation.urls")),
    path("", include("suggestions.urls")),
    path("", include("projects.webhooks.urls")),
    path("", include("projects.sso_urls")),
]
