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

/** What the import takes: character cards V2/V3 (JSON or PNG) and LuminoraCore templates. */
export const CARD_IMPORT_ACCEPT = '.json,.png,application/json,image/png'
export const CARD_IMPORT_MAX_BYTES = 8 * 1024 * 1024

/** Create a persona from a card or template file; a malformed one is an ApiError saying why. */
export function importPersona(file: File): Promise<Persona> {
  const body = new FormData()
  body.append('file', file)
  return http.post<Persona>('/api/personas/import', body)
}

export type CardSpec = 'v2' | 'v3'
export type CardFormat = 'json' | 'png'

/** Where a persona's card downloads from (a plain link: the session cookie authorises it). */
export function cardUrl(id: string, spec: CardSpec, format: CardFormat): string {
  return `/api/personas/${encodeURIComponent(id)}/card?spec=${spec}&format=${format}`
}
