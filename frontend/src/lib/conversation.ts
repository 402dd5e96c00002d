/** Applying production events to the local list of turns (pure state updates). */
import type { ServerMessage, Turn } from '@/api/types'

export interface ConversationState {
  turns: Turn[]
  autoplayRemaining: number
}

const STAGE: Record<Turn['status'], number> = { pending: 0, streaming: 1, done: 2, failed: 2, stopped: 2 }

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
    if (isActive(next) && old.content.length > next.content.length) {
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

/**
 * Apply one server message. Returns false when it refers to a turn we do not have
 * (the caller should re-read the production).
 */
export function applyMessage(state: ConversationState, msg: ServerMessage): boolean {
  switch (msg.type) {
    case 'turn.created':
    case 'turn.done':
    case 'turn.failed':
      upsertTurn(state.turns, msg.turn)
      return true
    case 'turn.token': {
      const turn = state.turns.find((t) => t.id === msg.turn)
      if (!turn) return false
      // A re-read turn already holds its first `token_count` deltas: skip those.
      if (msg.index < (turn.token_count ?? 0)) return true
      turn.content += msg.delta
      turn.token_count = msg.index + 1
      if (turn.status === 'pending') turn.status = 'streaming'
      return true
    }
    case 'autoplay':
      state.autoplayRemaining = msg.autoplay_remaining
      return true
    default:
      return true
  }
}

/** A turn still being produced. */
export const isActive = (t: Pick<Turn, 'status'>) => t.status === 'pending' || t.status === 'streaming'
