/** Applying production events and snapshots to the local list of turns (pure state updates). */
import type { AutoplayStop, ServerMessage, Turn } from '@/api/types'

export interface ConversationState {
  turns: Turn[]
  autoplayRemaining: number
  /** Turns whose worker was lost and that are being written again: turn id → attempt. */
  restarts: Record<string, number>
  /** Auto-play ended because this turn failed (said on the page until dismissed or rerun). */
  autoplayStopped: AutoplayStop | null
}

export const emptyConversation = (): ConversationState => ({ turns: [], autoplayRemaining: 0, restarts: {}, autoplayStopped: null })

const STAGE: Record<Turn['status'], number> = { pending: 0, streaming: 1, done: 2, failed: 2, stopped: 2 }

/** A turn still being produced. */
export const isActive = (t: Pick<Turn, 'status'>) => t.status === 'pending' || t.status === 'streaming'

const byCreation = (a: Turn, b: Turn) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0)

/** Insert or replace a turn, keeping the list ordered by creation time. */
export function upsertTurn(turns: Turn[], turn: Turn): void {
  const at = turns.findIndex((t) => t.id === turn.id)
  const old = at >= 0 ? turns[at] : undefined
  if (old) {
    // A late copy (e.g. the POST answer arriving after the socket's turn.done) must not
    // move a turn back in its lifecycle or wipe text that streamed in meanwhile.
    if (STAGE[turn.status] < STAGE[old.status]) return
    // Socket copies carry no directive (big bodies come over REST): keep the one we have,
    // unless it is the empty one of a turn answered before its prompt was built.
    const next = turn.directive === undefined && old.directive?.length ? { ...turn, directive: old.directive } : turn
    // A stop answers with the last checkpoint, which may hold fewer deltas than already
    // streamed here; the worker's own turn.done brings the whole text right after.
    const keepsText = isActive(next) || (next.status === 'stopped' && isActive(old))
    if (keepsText && old.content.length > next.content.length) {
      turns[at] = { ...next, content: old.content, token_count: old.token_count }
      return
    }
    turns[at] = next
    return
  }
  let i = turns.length
  while (i > 0 && (turns[i - 1]?.created_at ?? '') > turn.created_at) i--
  turns.splice(i, 0, turn)
}

/** Remove deleted turns; `reparented` children of a deleted one move up to its parent. */
export function removeTurns(turns: Turn[], deleted: string[], reparented: string[]): void {
  const gone = new Set(deleted)
  const parentOf = new Map(turns.map((t) => [t.id, t.parent]))
  const moved = new Set(reparented)
  // Everything below a moved child is one level higher too.
  const below = (t: Turn): boolean => {
    for (let up = t.parent; up; up = parentOf.get(up) ?? null) if (moved.has(up)) return true
    return false
  }
  const lifted = turns.filter((t) => moved.has(t.id) || below(t))
  for (const t of lifted) {
    t.depth -= 1
    if (moved.has(t.id)) {
      let up = t.parent
      while (up && gone.has(up)) up = parentOf.get(up) ?? null
      t.parent = up
    }
  }
  for (let i = turns.length - 1; i >= 0; i--) if (gone.has(turns[i]!.id)) turns.splice(i, 1)
}

/**
 * Apply one server message. A delta is appended only when its `index` is the turn's
 * `token_count`; one below it is already in the text (or the turn is finished) and is
 * skipped. Returns false when the message cannot be placed (an unknown turn, or a delta
 * past a hole): the caller should re-read the production.
 */
export function applyMessage(state: ConversationState, msg: ServerMessage): boolean {
  switch (msg.type) {
    case 'turn.created':
      upsertTurn(state.turns, msg.turn)
      return true
    case 'turn.done':
    case 'turn.failed':
      upsertTurn(state.turns, msg.turn)
      delete state.restarts[msg.turn.id]
      return true
    case 'turn.restarted':
    case 'turn.continued': {
      // Back to pending, from no text (restarted) or from its text so far (continued): a
      // step back in the lifecycle, so no upsert rules. Its next deltas are run `attempt`'s.
      const turn = { ...msg.turn, attempts: msg.attempt }
      const at = state.turns.findIndex((t) => t.id === turn.id)
      if (at >= 0) state.turns[at] = turn
      else upsertTurn(state.turns, turn)
      if (msg.type === 'turn.restarted') state.restarts[turn.id] = msg.attempt
      return true
    }
    case 'turn.edited':
      upsertTurn(state.turns, msg.turn)
      return true
    case 'turns.deleted':
      removeTurns(state.turns, msg.turns, msg.reparented)
      return true
    case 'turn.token': {
      const turn = state.turns.find((t) => t.id === msg.turn)
      if (!turn) return false
      if (!isActive(turn)) return true
      const known = turn.attempts ?? 0
      if (msg.attempt !== undefined && msg.attempt < known) return true // an older run's
      if (msg.attempt !== undefined && msg.attempt > known) {
        // A newer run (its turn.restarted may have been lost): it starts from nothing.
        if (msg.index !== 0) return false
        turn.content = ''
        turn.token_count = 0
        turn.attempts = msg.attempt
      }
      if (msg.index < turn.token_count) return true
      if (msg.index > turn.token_count) return false
      turn.content += msg.delta
      turn.token_count = msg.index + 1
      if (turn.status === 'pending') turn.status = 'streaming'
      return true
    }
    case 'autoplay':
      state.autoplayRemaining = msg.autoplay_remaining
      if (msg.stopped_by) state.autoplayStopped = msg.stopped_by
      return true
    default:
      return true
  }
}

/**
 * How many deltas of a turn's run `attempt` the state holds (the next index expected):
 * Infinity once the turn is finished or for an older run, 0 for a newer run, undefined for
 * a turn it does not have.
 */
export function tokenPosition(
  state: ConversationState,
  turnId: string,
  attempt?: number,
): number | undefined {
  const turn = state.turns.find((t) => t.id === turnId)
  if (!turn) return undefined
  if (!isActive(turn)) return Infinity
  const known = turn.attempts ?? 0
  if (attempt !== undefined && attempt < known) return Infinity // an older run: all stale
  if (attempt !== undefined && attempt > known) return 0 // a newer run starts from nothing
  return turn.token_count
}

/** The stream a delta belongs to: its turn's run (`turn#attempt`), and back. */
export const streamOf = (msg: ServerMessage): string | undefined =>
  msg.type === 'turn.token' ? `${msg.turn}#${msg.attempt ?? ''}` : undefined
export function streamParts(stream: string): [string, number | undefined] {
  const [turn = '', attempt = ''] = stream.split('#')
  return [turn, attempt === '' ? undefined : Number(attempt)]
}

/**
 * The turns of a fresh snapshot, ordered by creation. A streaming turn's stored text lags
 * its live deltas (it is checkpointed every ~250 ms), so with `keepStreamed` (no state
 * event was missed since the local copy, hence no restart) a local text that holds more
 * deltas of the same run is kept rather than shrinking back to the checkpoint.
 */
export function mergeSnapshot(local: Turn[], fresh: Turn[], keepStreamed: boolean): Turn[] {
  const mine = new Map(local.map((t) => [t.id, t]))
  return fresh
    .map((turn) => {
      const old = mine.get(turn.id)
      if (keepStreamed && old && isActive(old) && isActive(turn) && old.token_count > turn.token_count) {
        return { ...turn, content: old.content, token_count: old.token_count, status: 'streaming' as const }
      }
      return turn
    })
    .sort(byCreation)
}

/** Only turns still being written again keep their "worker lost" note. */
export function keepRestarts(restarts: Record<string, number>, turns: Turn[]): Record<string, number> {
  const active = new Set(turns.filter(isActive).map((t) => t.id))
  return Object.fromEntries(Object.entries(restarts).filter(([id]) => active.has(id)))
}
