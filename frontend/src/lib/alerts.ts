/**
 * What a player's tab says while they look elsewhere: how many things happened that they
 * would want to see (the tab title's count, the optional sound and notification), and whom
 * the round waits for. Pure: the composable useFrameAlerts holds the Vue and browser parts.
 */
import type { Seat } from '@/api/types'
import type { FrameState } from './frame'

export type AlertKind = 'outcome' | 'story' | 'window'

export interface Alert {
  key: string
  kind: AlertKind
}

/**
 * Everything in the state a reader is alerted to, keyed so that what is new is what a
 * remembered set lacks: every outcome (held, then released), each finished story of their seat (or the shared
 * one), and their seat's open window.
 */
export function alertsIn(state: FrameState, mySeat: string | null): Alert[] {
  // A held outcome (the GM reviews it) is one thing; its release, which brings its text, another.
  const alerts: Alert[] = state.outcomes.map((o) => ({ key: `${o.held ? 'held' : 'outcome'}:${o.id}`, kind: 'outcome' as const }))
  for (const n of Object.values(state.narratives)) {
    if (n.status === 'done' && (n.seat === mySeat || n.shared)) alerts.push({ key: `story:${n.id}`, kind: 'story' })
  }
  for (const w of Object.values(state.windows)) {
    if (w.seat === mySeat && w.status === 'open') alerts.push({ key: `window:${w.id}`, kind: 'window' })
  }
  return alerts
}

/** The alerts not among `seen`. */
export const unseen = (alerts: Alert[], seen: ReadonlySet<string>): Alert[] => alerts.filter((a) => !seen.has(a.key))

/** The tab title: the frame's name, after the count of what is unseen. */
export const frameTitle = (name: string, unread: number): string => `${unread ? `(${unread}) ` : ''}${name} · LMiX`

/** The line a notification shows for the most important of `alerts` (null: none). */
export function alertText(alerts: Alert[], frameName: string): string | null {
  if (alerts.some((a) => a.kind === 'window')) return `${frameName}: your window is open.`
  if (alerts.some((a) => a.kind === 'story')) return `${frameName}: your story continues.`
  if (alerts.some((a) => a.kind === 'outcome')) return `${frameName}: something happened.`
  return null
}

/**
 * Whom the round waits for: once some seat's window is open, the player-held seats that
 * have neither committed an intention nor a live window of their own (the AI seats act on
 * their own, so no one waits for them). Empty when no round is under way.
 */
export function waitingFor(state: FrameState): Seat[] {
  const windows = Object.values(state.windows).filter((w) => w.status === 'open' || w.status === 'firing')
  if (!windows.length || state.info.status !== 'open') return []
  const ready = new Set(windows.map((w) => w.seat))
  for (const l of Object.values(state.liquid)) if (l.status === 'committed' && l.face === 'player' && l.seat) ready.add(l.seat)
  return state.seats.filter((s) => s.controller === 'human' && !ready.has(s.id))
}
