/**
 * Character snapshots on the page: what an import may restore, a first look at a chosen
 * file (the server checks it fully and names any problem), the reset's typed confirmation,
 * and an import's answer in words.
 */
import type { SnapshotImported, SnapshotRecord } from '@/api/types'

export const RESTORABLE = ['affinity', 'mood', 'facts', 'memories'] as const
export type Restorable = (typeof RESTORABLE)[number]

export const RESTORE_LABELS: Record<Restorable, string> = {
  affinity: 'Relationships (affinity, trust, what it knows of the others)',
  mood: 'Mood',
  facts: 'Learned facts',
  memories: 'Memories',
}

/** The chosen options, in the server's order. */
export function restoreList(chosen: Record<Restorable, boolean>): Restorable[] {
  return RESTORABLE.filter((name) => chosen[name])
}

/**
 * A first look at a snapshot file's text: null when it looks like version 1, else why not.
 * Only a hint before sending; the server's 400 says exactly what and where.
 */
export function snapshotProblem(text: string): string | null {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    return 'This file is not JSON.'
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return 'This file is not a snapshot.'
  const info = (data as Record<string, unknown>)._snapshot_info as Record<string, unknown> | undefined
  if (!info || typeof info !== 'object' || info.format !== 'lmix-snapshot') return 'This file is not an LMiX character snapshot.'
  if (info.version !== 1) return `This snapshot is version ${JSON.stringify(info.version)}; this LMiX reads version 1.`
  return null
}

/** The character whose snapshot a file holds, if it says. */
export function snapshotCharacter(text: string): string | null {
  try {
    const character = JSON.parse(text)?._snapshot_info?.character
    return typeof character === 'string' ? character : null
  } catch {
    return null
  }
}

/** The reset is confirmed when the character's name is typed back (spaces around ignored). */
export function resetConfirmed(typed: string, name: string): boolean {
  return typed.trim() !== '' && typed.trim() === name.trim()
}

/** An import's answer as sentences for the GM. */
export function importSummary(answer: SnapshotImported): string[] {
  const lines = [
    answer.restored.length ? `Restored: ${answer.restored.join(', ')}.` : 'Nothing was chosen to restore.',
  ]
  if (answer.restored.includes('memories')) {
    lines.push(answer.memories === 1 ? '1 memory added.' : `${answer.memories} memories added.`)
  }
  if (answer.unknown_characters.length) {
    lines.push(`No one here is called ${answer.unknown_characters.join(', ')}: skipped.`)
  }
  return [...lines, ...answer.warnings]
}

const KIND_LABELS: Record<SnapshotRecord['kind'], string> = {
  reset: 'Before a reset',
  export: 'Exported',
  import: 'Imported',
  frame: 'Periodic (whole frame)',
  rewind: 'Before a rewind (whole frame)',
}

/** The kept snapshots one seat can be restored from (its own, and the frame's periodic and pre-rewind ones), newest first, at most `most`. */
export function restorableFor(records: SnapshotRecord[], seatId: string, most = 8): SnapshotRecord[] {
  return records.filter((r) => r.kind === 'frame' || r.kind === 'rewind' || r.seat === seatId).slice(0, most)
}

/** A kept snapshot in a few words: what it was and when. */
export function recordLabel(record: SnapshotRecord, locale?: string): string {
  const when = new Date(record.created_at).toLocaleString(locale, { dateStyle: 'short', timeStyle: 'short' })
  const by = record.by ? ` by ${record.by}` : ''
  return `${KIND_LABELS[record.kind]}${by}, ${when}`
}
