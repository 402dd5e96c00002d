import { describe, expect, it } from 'vitest'
import type { Turn } from '@/api/types'
import { makeTurn } from '@/test/factories'
import { applyMessage, upsertTurn, type ConversationState } from './conversation'

describe('applyMessage', () => {
  it('streams tokens into a turn and marks it streaming', () => {
    const state: ConversationState = { turns: [], autoplayRemaining: 0 }
    applyMessage(state, { type: 'turn.created', seq: 1, turn: makeTurn({ id: 't', status: 'pending' }) })
    applyMessage(state, { type: 'turn.token', seq: 2, turn: 't', index: 0, delta: 'Hel' })
    applyMessage(state, { type: 'turn.token', seq: 3, turn: 't', index: 1, delta: 'lo' })
    expect(state.turns[0]).toMatchObject({ content: 'Hello', status: 'streaming' })
    applyMessage(state, { type: 'turn.done', seq: 4, turn: makeTurn({ id: 't', content: 'Hello.', status: 'done', completion_tokens: 2 }) })
    expect(state.turns[0]).toMatchObject({ content: 'Hello.', status: 'done', completion_tokens: 2 })
  })

  it('skips tokens a re-read turn already holds, then continues', () => {
    const state: ConversationState = {
      turns: [makeTurn({ id: 't', status: 'streaming', content: 'One two ', token_count: 2 })],
      autoplayRemaining: 0,
    }
    applyMessage(state, { type: 'turn.token', seq: 5, turn: 't', index: 1, delta: 'two ' })
    applyMessage(state, { type: 'turn.token', seq: 6, turn: 't', index: 2, delta: 'three' })
    expect(state.turns[0]).toMatchObject({ content: 'One two three', token_count: 3 })
  })

  it('asks for a re-read when a token names an unknown turn', () => {
    const state: ConversationState = { turns: [], autoplayRemaining: 0 }
    expect(applyMessage(state, { type: 'turn.token', seq: 1, turn: 'x', index: 0, delta: 'a' })).toBe(false)
  })

  it('tracks autoplay_remaining', () => {
    const state: ConversationState = { turns: [], autoplayRemaining: 0 }
    applyMessage(state, { type: 'autoplay', seq: 1, autoplay_remaining: 3 })
    expect(state.autoplayRemaining).toBe(3)
  })
})

describe('upsertTurn', () => {
  it('keeps turns ordered by creation', () => {
    const turns: Turn[] = []
    upsertTurn(turns, makeTurn({ id: 'b', created_at: '2025-01-01T00:00:02Z' }))
    upsertTurn(turns, makeTurn({ id: 'a', created_at: '2025-01-01T00:00:01Z' }))
    upsertTurn(turns, makeTurn({ id: 'c', created_at: '2025-01-01T00:00:03Z' }))
    expect(turns.map((t) => t.id)).toEqual(['a', 'b', 'c'])
  })

  it('ignores a late pending copy of a finished turn (POST answer after turn.done)', () => {
    const turns = [makeTurn({ id: 't', content: 'All done', status: 'done' })]
    upsertTurn(turns, makeTurn({ id: 't', status: 'pending' }))
    expect(turns[0]).toMatchObject({ content: 'All done', status: 'done' })
  })

  it('drops the empty directive of a pending turn so the finished one can be fetched', () => {
    const turns = [makeTurn({ id: 't', status: 'pending', directive: [] })]
    upsertTurn(turns, makeTurn({ id: 't', status: 'done', content: 'Hi' }))
    expect(turns[0]?.directive).toBeUndefined()
    const kept = [makeTurn({ id: 'u', status: 'done', directive: [{ role: 'system', content: 'S' }] })]
    upsertTurn(kept, makeTurn({ id: 'u', status: 'done' }))
    expect(kept[0]?.directive).toHaveLength(1)
  })

  it('keeps streamed text over a shorter copy of a streaming turn', () => {
    const turns = [makeTurn({ id: 't', content: 'Hello wor', status: 'streaming' })]
    upsertTurn(turns, makeTurn({ id: 't', content: 'Hel', status: 'streaming' }))
    expect(turns[0]?.content).toBe('Hello wor')
  })
})
