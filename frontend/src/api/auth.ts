/** Session authentication endpoints. */
import { http, request, setCsrfToken } from './http'
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

/** Change the password; this session stays signed in (the account's other sessions end). */
export const changePassword = (oldPassword: string, newPassword: string) =>
  http.post<void>('/api/auth/password', { old_password: oldPassword, new_password: newPassword }, { quiet: true })

/** Delete the account and everything it owns; the username typed confirms it. */
export const deleteAccount = (username: string, password: string) =>
  request<void>('DELETE', '/api/auth/me', { username, password }, { quiet: true })
