"""Serves the built SPA's index.html for every client-side route, so deep links survive reload."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import ensure_csrf_cookie

MISSING_BUILD = (
    "<!doctype html><title>LMiX</title>"
    "<p>The web client is not built yet: <code>make run</code> builds <code>frontend/</code>.</p>"
    '<p>API docs: <a href="/api/docs">/api/docs</a>. Admin: <a href="/admin/">/admin/</a>.</p>'
)


@ensure_csrf_cookie
def spa_index(request: HttpRequest, path: str = "") -> HttpResponse:
    index = settings.FRONTEND_DIST / "index.html"
    if not index.exists():
        return HttpResponse(MISSING_BUILD, status=503)
    response = HttpResponse(index.read_bytes(), content_type="text/html; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    return response


def api_not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    return JsonResponse({"detail": f"No API endpoint at /api/{path}."}, status=404)
