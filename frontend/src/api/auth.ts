/** Session authentication endpoints. */
import { http, setCsrfToken } from './http'
import type { User } from './types'

export async function fetchCsrf(): Promise<string> {
  const { csrfToken } = await http.get<{ csrfToken: string }>('/api/auth/csrf', { quiet: true })
  setCsrfToken(csrfToken)
  return csrfToken
}

export const me = () => http.get<User>('/api/auth/me', { quiet: true })

export const login = (username: string, password: string) =>
  http.post<User>('/api/auth/login', { username, password }, { quiet: true })

export const signup = (username: string, password: string, email?: string) =>
  http.post<User>('/api/auth/signup', email ? { username, password, email } : { username, password }, {
    quiet: true,
  })

export const logout = () => http.post<void>('/api/auth/logout', {}, { quiet: true })
