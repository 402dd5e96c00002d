"""Serves the built SPA's index.html for every client-side route, so deep links survive reload,
and the uploaded media (persona avatars)."""

import mimetypes

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import static
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_safe

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


@require_safe
def media(request: HttpRequest, path: str) -> HttpResponse:
    """An uploaded file. Its name is unique per upload (so it is cached for good) and only
    image types are ever stored; the headers still forbid running anything from it."""
    response = static.serve(request, path, document_root=settings.MEDIA_ROOT)
    response["Content-Type"] = mimetypes.guess_type(path)[0] or "application/octet-stream"
    response["Cache-Control"] = "public, max-age=31536000, immutable"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["X-Content-Type-Options"] = "nosniff"
    return response
