/** The signed-in user and the session lifecycle. */
import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import * as authApi from '@/api/auth'
import { ApiError } from '@/api/http'
import type { User } from '@/api/types'

export const useAuthStore = defineStore('auth', () => {
  const user = ref<User | null>(null)
  const ready = ref(false)
  const isLoggedIn = computed(() => user.value !== null)

  /** Get the CSRF cookie, then find out who is signed in. Never throws. */
  async function init(): Promise<void> {
    try {
      await authApi.fetchCsrf()
    } catch {
      // The backend may be down; the login page will say so when used.
    }
    await refresh()
    ready.value = true
  }

  async function refresh(): Promise<User | null> {
    try {
      user.value = await authApi.me()
    } catch (e) {
      if (!(e instanceof ApiError) || e.status === 401 || e.status === 403) user.value = null
    }
    return user.value
  }

  async function login(username: string, password: string): Promise<User> {
    user.value = await authApi.login(username, password)
    return user.value
  }

  async function signup(username: string, password: string, email?: string): Promise<User> {
    user.value = await authApi.signup(username, password, email)
    return user.value
  }

  async function logout(): Promise<void> {
    try {
      await authApi.logout()
    } finally {
      user.value = null
      // Django rotates the CSRF token with the session.
      await authApi.fetchCsrf().catch(() => undefined)
    }
  }

  return { user, ready, isLoggedIn, init, refresh, login, signup, logout }
})
