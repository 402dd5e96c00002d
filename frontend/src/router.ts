/** Routes (history mode) and the guard that sends signed-out users to the login page. */
import { createRouter, createWebHistory, type RouteRecordRaw } from 'vue-router'
import { useAuthStore } from '@/stores/auth'

const routes: RouteRecordRaw[] = [
  { path: '/login', name: 'login', component: () => import('@/views/LoginView.vue'), meta: { public: true, title: 'Log in' } },
  { path: '/signup', name: 'signup', component: () => import('@/views/SignupView.vue'), meta: { public: true, title: 'Sign up' } },
  { path: '/', name: 'dashboard', component: () => import('@/views/DashboardView.vue'), meta: { title: 'Dashboard' } },
  { path: '/productions', name: 'productions', component: () => import('@/views/ProductionsView.vue'), meta: { title: 'Productions' } },
  {
    path: '/productions/:id',
    name: 'production',
    component: () => import('@/views/ProductionView.vue'),
    props: true,
    meta: { title: 'Production', wide: true },
  },
  { path: '/frames', name: 'frames', component: () => import('@/views/FramesView.vue'), meta: { title: 'Frames' } },
  {
    path: '/frames/:id',
    name: 'frame',
    component: () => import('@/views/FramePlayerView.vue'),
    props: true,
    meta: { title: 'Frame', wide: true },
  },
  {
    path: '/frames/:id/gm',
    name: 'frame-gm',
    component: () => import('@/views/FrameGmView.vue'),
    props: true,
    meta: { title: 'Frame · GM', wide: true },
  },
  {
    path: '/join/:code',
    name: 'join',
    component: () => import('@/views/JoinView.vue'),
    props: true,
    meta: { title: 'Join a frame' },
  },
  { path: '/models', name: 'models', component: () => import('@/views/ModelsView.vue'), meta: { title: 'Models' } },
  { path: '/worlds', name: 'worlds', component: () => import('@/views/WorldsView.vue'), meta: { title: 'Worlds' } },
  { path: '/scenarios', name: 'scenarios', component: () => import('@/views/ScenariosView.vue'), meta: { title: 'Scenarios' } },
  { path: '/affiliations', name: 'affiliations', component: () => import('@/views/AffiliationsView.vue'), meta: { title: 'Affiliations' } },
  { path: '/personas', name: 'personas', component: () => import('@/views/PersonasView.vue'), meta: { title: 'Personas' } },
  { path: '/settings', name: 'settings', component: () => import('@/views/SettingsView.vue'), meta: { title: 'Settings' } },
  { path: '/skills', name: 'skills', component: () => import('@/views/SkillsView.vue'), meta: { title: 'Skills' } },
  { path: '/assistants', name: 'assistants', component: () => import('@/views/AssistantsView.vue'), meta: { title: 'Assistants' } },
  {
    path: '/watch/:code',
    name: 'spectate',
    component: () => import('@/views/SpectateView.vue'),
    props: true,
    meta: { title: 'Watching', wide: true },
  },
  { path: '/:pathMatch(.*)*', name: 'not-found', component: () => import('@/views/NotFoundView.vue'), meta: { public: true, title: 'Not found' } },
]

export function createAppRouter() {
  const router = createRouter({
    // The app lives at the site root even though its files are served under /static/.
    history: createWebHistory('/'),
    routes,
    scrollBehavior: (_to, _from, saved) => saved ?? { top: 0 },
  })

  router.beforeEach(async (to) => {
    const auth = useAuthStore()
    if (!auth.ready) await auth.init()
    if (to.meta.public) {
      if ((to.name === 'login' || to.name === 'signup') && auth.isLoggedIn) {
        const redirect = typeof to.query.redirect === 'string' ? to.query.redirect : '/'
        return redirect.startsWith('/') && !redirect.startsWith('//') ? redirect : '/'
      }
      return true
    }
    if (!auth.isLoggedIn) return { name: 'login', query: to.fullPath !== '/' ? { redirect: to.fullPath } : {} }
    return true
  })

  router.afterEach((to) => {
    document.title = to.meta.title ? `${String(to.meta.title)} · LMiX` : 'LMiX'
  })

  return router
}
