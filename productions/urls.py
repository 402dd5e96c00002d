"""REST routes of productions and turns."""

from lmix.urls_router import OptionalSlashRouter

from .apis import ProductionViewSet

router = OptionalSlashRouter()
router.register("productions", ProductionViewSet, basename="production")

urlpatterns = router.urls
