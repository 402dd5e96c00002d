/** Personas: character templates with layered truths and affiliations. */
import { crudApi } from './crud'
import { http } from './http'
import type { Persona, PersonaInput } from './types'

export const personasApi = crudApi<Persona, PersonaInput>('/api/personas')

/** The avatar types and size the server takes (it judges the file's content, too). */
export const AVATAR_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif']
export const AVATAR_MAX_BYTES = 2 * 1024 * 1024

/** Upload an image as the persona's avatar; its `avatar_url` then points to the stored copy. */
export function uploadAvatar(id: string, file: File): Promise<Persona> {
  const body = new FormData()
  body.append('avatar', file)
  return http.post<Persona>(`/api/personas/${encodeURIComponent(id)}/avatar`, body)
}
