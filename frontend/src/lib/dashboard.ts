/**
 * The dashboard's frames: which come first (my turn, then the live frames I play in, most
 * recently active first), which one is the hero card, what each says is waiting, and where
 * it opens. Pure: DashboardView holds the Vue parts.
 */
import type { FrameStatus, FrameSummary } from '@/api/types'

/** Where a frame opens: its GM's page for the GM, the player's page for a player. */
export const framePage = (f: Pick<FrameSummary, 'id' | 'is_gm'>): string => (f.is_gm ? `/frames/${f.id}/gm` : `/frames/${f.id}`)

/** A frame's status as people say it. */
export const STATUS_WORDS: Record<FrameStatus, string> = { open: 'live', paused: 'paused', closed: 'closed' }

/** 0 first: my turn; live frames I play in; live frames I run; paused; closed. */
export function frameRank(f: FrameSummary): number {
  if (f.my_turn) return 0
  if (f.status === 'open') return f.my_seat ? 1 : 2
  return f.status === 'paused' ? 3 : 4
}

/** The frames in the dashboard's order: by rank, then most recently active, then name. */
export function dashboardFrames(frames: readonly FrameSummary[]): FrameSummary[] {
  return [...frames].sort(
    (a, b) => frameRank(a) - frameRank(b) || (a.active_at < b.active_at ? 1 : a.active_at > b.active_at ? -1 : 0) || a.name.localeCompare(b.name),
  )
}

/**
 * The frame the dashboard puts first, as a card of its own: the first one when it is my turn
 * in it, or, for someone with no production of their own (a player who came by an invite
 * link), the first frame they play in that is not closed. Null: none stands out.
 */
export function heroFrame(sorted: readonly FrameSummary[], hasProductions: boolean): FrameSummary | null {
  const first = sorted[0]
  if (!first) return null
  if (first.my_turn) return first
  if (!hasProductions && first.my_seat && first.status !== 'closed') return first
  return null
}

const NAMES_SHOWN = 3

/** Names as a phrase: "Bob", "Bob and Tony", "Ann, Bob, Cy and 2 more". */
export function namesPhrase(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? ''
  const shown = names.slice(0, NAMES_SHOWN)
  const rest = names.length - shown.length
  if (rest > 0) return `${shown.join(', ')} and ${rest} more`
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`
}

/** What a frame is waiting for, in a few words ("" when nothing is under way). */
export function waitingLine(f: FrameSummary): string {
  if (f.status !== 'open') return ''
  if (f.my_turn) {
    const others = f.waiting_for.length - 1
    return others > 0 ? `Your turn · ${others} other${others === 1 ? '' : 's'} to commit` : 'Your turn'
  }
  return f.waiting_for.length ? `Waiting for ${namesPhrase(f.waiting_for)}` : ''
}
