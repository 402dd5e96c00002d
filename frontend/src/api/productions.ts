/** Productions and their conversation turns, autoplay and the realtime socket URL. */
import { crudApi } from './crud'
import { http } from './http'
import type { ProductionDetail, ProductionInput, ProductionSummary, Turn, TurnCreateInput } from './types'

const base = '/api/productions'
const one = (id: string) => `${base}/${encodeURIComponent(id)}`

export const productionsApi = crudApi<ProductionSummary, ProductionInput>(base)

export const getProduction = (id: string) => http.get<ProductionDetail>(one(id))

/** A director turn (content, no assistant) answers 201; otherwise 202 with a pending turn. */
export const createTurn = (id: string, input: TurnCreateInput) => http.post<Turn>(`${one(id)}/turns`, input)

/** Follow another branch: the server continues from `turnId` and shows it after a reload. */
export const setHead = (id: string, turnId: string) =>
  http.put<{ turn: string }>(`${one(id)}/head`, { turn: turnId })

export const stopTurn = (id: string, turnId: string) =>
  http.post<Turn>(`${one(id)}/turns/${encodeURIComponent(turnId)}/stop`, {})

export const startAutoplay = (id: string, count: number, parent?: string | null) =>
  http.post<{ autoplay_remaining: number }>(
    `${one(id)}/autoplay`,
    parent === undefined ? { count } : { count, parent },
  )

export const stopAutoplay = (id: string) => http.delete<{ autoplay_remaining: number }>(`${one(id)}/autoplay`)

/** The websocket of one production, on the page's own host. */
export function productionSocketUrl(id: string, loc: Pick<Location, 'protocol' | 'host'> = window.location): string {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:'
  return `${scheme}//${loc.host}/ws/productions/${encodeURIComponent(id)}/`
}
