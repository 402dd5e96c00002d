import { describe, expect, it } from 'vitest'
import type { FrameSummary } from '@/api/types'
import { dashboardFrames, framePage, heroFrame, namesPhrase, waitingLine } from './dashboard'

const frame = (over: Partial<FrameSummary> = {}): FrameSummary => ({
  id: 'f',
  name: 'Scene',
  production: 'p',
  production_name: 'Therapy',
  status: 'open',
  mode: 'per_character',
  is_gm: false,
  created_at: '2026-01-01T00:00:00Z',
  active_at: '2026-01-01T00:00:00Z',
  my_seat: { id: 's', name: 'Alice', avatar_url: '' },
  waiting_for: [],
  my_turn: false,
  ...over,
})

describe('dashboardFrames', () => {
  it('puts my turn first, then live frames I play in, live ones I run, paused, closed; newest first within', () => {
    const order = dashboardFrames([
      frame({ id: 'closed', status: 'closed', active_at: '2026-05-01T00:00:00Z' }),
      frame({ id: 'run', is_gm: true, my_seat: null, active_at: '2026-04-01T00:00:00Z' }),
      frame({ id: 'play-old', active_at: '2026-01-01T00:00:00Z' }),
      frame({ id: 'paused', status: 'paused', active_at: '2026-06-01T00:00:00Z' }),
      frame({ id: 'turn', my_turn: true, waiting_for: ['Alice'], active_at: '2025-01-01T00:00:00Z' }),
      frame({ id: 'play-new', active_at: '2026-03-01T00:00:00Z' }),
    ]).map((f) => f.id)
    expect(order).toEqual(['turn', 'play-new', 'play-old', 'run', 'paused', 'closed'])
  })
})

describe('heroFrame', () => {
  it('is the frame where it is my turn', () => {
    const sorted = dashboardFrames([frame({ id: 'a' }), frame({ id: 'b', my_turn: true })])
    expect(heroFrame(sorted, true)?.id).toBe('b')
  })

  it('is the frame a player without productions sits in, never a closed one', () => {
    expect(heroFrame([frame({ id: 'joined' })], false)?.id).toBe('joined')
    expect(heroFrame([frame({ id: 'joined' })], true)).toBeNull() // an author sees the list
    expect(heroFrame([frame({ status: 'closed' })], false)).toBeNull()
    expect(heroFrame([frame({ is_gm: true, my_seat: null })], false)).toBeNull()
    expect(heroFrame([], false)).toBeNull()
  })
})

describe('waitingLine', () => {
  it('says whose turn it is and whom the round waits for', () => {
    expect(waitingLine(frame({ my_turn: true, waiting_for: ['Alice'] }))).toBe('Your turn')
    expect(waitingLine(frame({ my_turn: true, waiting_for: ['Alice', 'Bob'] }))).toBe('Your turn · 1 other to commit')
    expect(waitingLine(frame({ waiting_for: ['Bob', 'Tony'] }))).toBe('Waiting for Bob and Tony')
    expect(waitingLine(frame())).toBe('')
    expect(waitingLine(frame({ status: 'paused', waiting_for: ['Bob'] }))).toBe('')
  })

  it('keeps a long list short', () => {
    expect(namesPhrase(['A', 'B', 'C', 'D', 'E'])).toBe('A, B, C and 2 more')
    expect(namesPhrase(['A', 'B', 'C'])).toBe('A, B and C')
    expect(namesPhrase([])).toBe('')
  })
})

describe('framePage', () => {
  it('opens the GM page for the GM and the player page otherwise', () => {
    expect(framePage({ id: 'f1', is_gm: true })).toBe('/frames/f1/gm')
    expect(framePage({ id: 'f1', is_gm: false })).toBe('/frames/f1')
  })
})
