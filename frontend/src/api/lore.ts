/** A world's lorebook: keyword-triggered entries under /api/worlds/{id}/lore. */
import { http } from './http'
import type { LoreEntry, LoreEntryInput, Uuid } from './types'

const base = (worldId: Uuid) => `/api/worlds/${encodeURIComponent(worldId)}/lore`
const one = (worldId: Uuid, id: Uuid) => `${base(worldId)}/${encodeURIComponent(id)}`

export const loreApi = {
  list: (worldId: Uuid) => http.get<LoreEntry[]>(base(worldId)),
  create: (worldId: Uuid, input: LoreEntryInput) => http.post<LoreEntry>(base(worldId), input),
  patch: (worldId: Uuid, id: Uuid, input: Partial<LoreEntryInput>) => http.patch<LoreEntry>(one(worldId, id), input),
  remove: (worldId: Uuid, id: Uuid) => http.delete(one(worldId, id)),
}
