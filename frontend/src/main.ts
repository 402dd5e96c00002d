/** Entry point: Pinia, the router, the lost-session hook, then mount. */
import { createPinia } from 'pinia'
import { createApp } from 'vue'
import App from './App.vue'
import { onUnauthorized } from './api/http'
import { applyTheme, storedTheme } from './lib/theme'
import { createAppRouter } from './router'
import { useAuthStore } from './stores/auth'
import { useToastsStore } from './stores/toasts'
import './styles/main.css'

// index.html applied the saved theme before the first paint; this keeps the two in step.
applyTheme(storedTheme())

const app = createApp(App)
const pinia = createPinia()
app.use(pinia)
const router = createAppRouter()
app.use(router)

// A 401/403 from the API may mean the session ended: check, and if so go to the login page.
let checking = false
onUnauthorized(async () => {
  if (checking) return
  checking = true
  try {
    const auth = useAuthStore()
    if (!(await auth.refresh())) {
      useToastsStore().push('Your session ended. Please log in again.', 'error')
      await router.push({ name: 'login', query: { redirect: router.currentRoute.value.fullPath } })
    }
  } finally {
    checking = false
  }
})

void router.isReady().then(() => app.mount('#app'))
