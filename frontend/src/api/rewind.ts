/** The GM's rewind and regenerate of a frame (docs/synthesis.md, "Rewind and regenerate"): dry runs, rewinds, restores. */
import { http } from './http'
import type { components } from './schema'

type Schemas = components['schemas']
/** What a rewind would hide: counts by kind, and (up to 200 of each) which rows. */
export type RewindPreview = Schemas['RewindPreview']
/** A regenerate's dry run: what goes, and the intentions the outcome resolved (to rewrite). */
export type RegeneratePreview = Schemas['RegeneratePreview']
/** One rewind of the frame, restorable when it is the newest standing one. */
export type Rewind = Schemas['RewindAnswer']
export type OutcomeRegenerated = Schemas['OutcomeRegenerated']
/** An intention rewritten before the outcome runs again. */
export interface RegenerateInput {
  liquid: string
  content: string
}

const frameUrl = (id: string) => `/api/frames/${encodeURIComponent(id)}`
const outcomeUrl = (id: string) => `/api/outcomes/${encodeURIComponent(id)}`

export const previewRewind = (frameId: string, to: string) =>
  http.post<RewindPreview>(`${frameUrl(frameId)}/rewind`, { to, dry_run: true })
export const rewindFrame = (frameId: string, to: string) => http.post<Rewind>(`${frameUrl(frameId)}/rewind`, { to, dry_run: false })
export const listRewinds = (frameId: string) => http.get<{ rewinds: Rewind[] }>(`${frameUrl(frameId)}/rewinds`)
export const restoreRewind = (frameId: string, rewindId: number) =>
  http.post<Rewind>(`${frameUrl(frameId)}/rewinds/${rewindId}/restore`)
export const previewRegenerate = (outcomeId: string) =>
  http.post<RegeneratePreview>(`${outcomeUrl(outcomeId)}/regenerate`, { dry_run: true })
export const regenerateWith = (outcomeId: string, inputs: RegenerateInput[]) =>
  http.post<OutcomeRegenerated>(`${outcomeUrl(outcomeId)}/regenerate`, inputs.length ? { inputs } : {})

/** The dry run's counts as one line: "2 outcomes, 2 narratives, 1 intention…" (kinds with none left out). */
export function countsLine(counts: Record<string, number>): string {
  const names: [string, string, string][] = [
    ['outcomes', 'outcome', 'outcomes'],
    ['narratives', 'narrative', 'narratives'],
    ['liquid', 'intention', 'intentions'],
    ['memories', 'memory', 'memories'],
    ['state_deltas', 'state change', 'state changes'],
    ['scenes', 'later scene', 'later scenes'],
    ['scenes_reopened', 'scene reopened', 'scenes reopened'],
  ]
  const parts = names.filter(([key]) => (counts[key] ?? 0) > 0).map(([key, one, many]) => `${counts[key]} ${counts[key] === 1 ? one : many}`)
  return parts.length ? parts.join(', ') : 'nothing'
}
