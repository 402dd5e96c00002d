/** Productions and their conversation turns, autoplay and the realtime socket URL. */
import { crudApi } from './crud'
import { http } from './http'
import type {
  ProductionDetail,
  ProductionInput,
  ProductionState,
  ProductionSummary,
  ProductionRewindAnswer,
  Turn,
  TurnCreateInput,
} from './types'

const base = '/api/productions'
const one = (id: string) => `${base}/${encodeURIComponent(id)}`

export const productionsApi = crudApi<ProductionSummary, ProductionInput>(base)

export const getProduction = (id: string) => http.get<ProductionDetail>(one(id))

/** A director turn (content, no assistant) answers 201; otherwise 202 with a pending turn. */
export const createTurn = (id: string, input: TurnCreateInput) => http.post<Turn>(`${one(id)}/turns`, input)

/** Follow another branch: the server continues from `turnId` and shows it after a reload. */
export const setHead = (id: string, turnId: string) =>
  http.put<{ turn: string }>(`${one(id)}/head`, { turn: turnId })

/** Go back to turn `to` of the followed branch (`dryRun`: only say what would be undone).
 *  The later turns are kept: `setHead(id, answer.restore)` brings them back. */
export const rewind = (id: string, to: string, dryRun: boolean) =>
  http.post<ProductionRewindAnswer>(`${one(id)}/rewind`, { to, dry_run: dryRun })

/** The cast's state (mood, relationships, facts, memories) at the head. */
export const getProductionState = (id: string) => http.get<ProductionState>(`${one(id)}/state`)

const turnUrl = (id: string, turnId: string) => `${one(id)}/turns/${encodeURIComponent(turnId)}`

export const editTurn = (id: string, turnId: string, content: string) =>
  http.patch<Turn>(turnUrl(id, turnId), { content })

/** A turn with later turns needs `branch`: delete them too, or keep them (409 otherwise). */
export const deleteTurn = (id: string, turnId: string, branch?: 'delete' | 'keep') =>
  http.delete<void>(branch ? `${turnUrl(id, turnId)}?branch=${branch}` : turnUrl(id, turnId))

/** Extend the last turn of a branch; it streams on the socket like a new turn. */
export const continueTurn = (id: string, turnId: string) => http.post<Turn>(`${turnUrl(id, turnId)}/continue`, {})

/** Draft a cast member's next line; it streams on the socket as `draft.*` events that
 *  carry `draft`, an id chosen here so that none arrives before the page knows it. */
export const impersonate = (id: string, persona: string, parent: string | null, draft: string) =>
  http.post<{ draft: string }>(`${one(id)}/impersonate`, { persona, parent, draft })

/** Change some of a production's settings. */
export const updateProduction = (id: string, input: Partial<ProductionInput & Pick<ProductionSummary, 'auto_reply'>>) =>
  http.patch<ProductionSummary>(one(id), input)

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
