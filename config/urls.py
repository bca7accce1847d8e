from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

handler404 = "config.api_errors.not_found"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include("projects.api_urls")),
    path("api/", include("annotation.api_urls")),
    path("api/", include("aggregation.api_urls")),
    path("", include("projects.urls")),
    path("", include("annotation.urls")),
    path("", include("aggregation.urls")),
    path("", include("aggregation.suggestion_urls")),
]
