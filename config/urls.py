"""URL map: the API under /api/, the admin, and the SPA for every other path."""

from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from authoring import apis
from lmix import auth_apis
from lmix.urls_router import OptionalSlashRouter

from . import spa

router = OptionalSlashRouter()
router.register("models", apis.LLMModelViewSet, basename="model")
router.register("worlds", apis.WorldViewSet, basename="world")
router.register(
    rf"worlds/(?P<world_pk>{apis.UUID_PATTERN})/lore", apis.LoreEntryViewSet, basename="lore"
)
router.register("scenarios", apis.ScenarioViewSet, basename="scenario")
router.register("affiliations", apis.AffiliationViewSet, basename="affiliation")
router.register("personas", apis.PersonaViewSet, basename="persona")
router.register("assistants", apis.AssistantViewSet, basename="assistant")

auth_patterns = [
    re_path(r"^csrf/?$", auth_apis.CsrfApi.as_view(), name="auth-csrf"),
    re_path(r"^signup/?$", auth_apis.SignupApi.as_view(), name="auth-signup"),
    re_path(r"^login/?$", auth_apis.LoginApi.as_view(), name="auth-login"),
    re_path(r"^logout/?$", auth_apis.LogoutApi.as_view(), name="auth-logout"),
    re_path(r"^me/?$", auth_apis.MeApi.as_view(), name="auth-me"),
    re_path(r"^password/?$", auth_apis.PasswordApi.as_view(), name="auth-password"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/auth/", include(auth_patterns)),
    re_path(r"^api/schema/?$", SpectacularAPIView.as_view(), name="schema"),
    re_path(r"^api/docs/?$", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/", include("productions.urls")),
    path("api/", include("synthesis.urls")),
    re_path(r"^api/prompt-controls/?$", apis.PromptControlsApi.as_view(), name="prompt-controls"),
    path("api/", include(router.urls)),
    re_path(r"^api/(?P<path>.*)$", spa.api_not_found),
    re_path(r"^media/(?P<path>avatars/[0-9a-f]{32}\.(?:png|jpg|gif|webp))$", spa.media),
    re_path(r"^(?!static/|ws/)(?P<path>.*)$", spa.spa_index, name="spa"),
]
