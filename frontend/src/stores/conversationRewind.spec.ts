import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import * as api from '@/api/productions'
import type { ProductionRewindAnswer, ServerMessage, Turn } from '@/api/types'
import { makeDetail, makeTurn } from '@/test/factories'
import { useConversationStore } from './conversation'

vi.mock('@/api/productions', () => ({
  productionsApi: {},
  getProduction: vi.fn(),
  createTurn: vi.fn(),
  setHead: vi.fn(() => Promise.resolve({ turn: '' })),
  rewind: vi.fn(),
  productionSocketUrl: vi.fn(),
}))

const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString()

// t1 → t2 → t3, all on one branch; the server's head is t3.
function turns(): Turn[] {
  return [
    makeTurn({ id: 't1', content: 'One.', created_at: at(1) }),
    makeTurn({ id: 't2', parent: 't1', depth: 1, content: 'Two.', created_at: at(2) }),
    makeTurn({ id: 't3', parent: 't2', depth: 2, content: 'Three.', created_at: at(3) }),
  ]
}

function plan(dryRun: boolean): ProductionRewindAnswer {
  return {
    to: 't1',
    dry_run: dryRun,
    head: dryRun ? 't3' : 't1',
    restore: 't3',
    turns: [
      { id: 't2', speaker_name: 'Alice', excerpt: 'Two.' },
      { id: 't3', speaker_name: 'Alice', excerpt: 'Three.' },
    ],
    state_deltas: 4,
    memories: 2,
  }
}

async function loaded(head = 't3') {
  setActivePinia(createPinia())
  vi.mocked(api.getProduction).mockResolvedValue(makeDetail({ turns: turns(), head, event_seq: 5 }))
  const conv = useConversationStore()
  await conv.load('prod1')
  return conv
}

const ids = (conv: ReturnType<typeof useConversationStore>) => conv.path.map((p) => p.turn.id)

describe('rewinding a production', () => {
  beforeEach(() => {
    vi.mocked(api.rewind).mockReset()
    vi.mocked(api.setHead).mockClear()
  })

  it('previews without moving anything, then rewinds: the later turns are hidden, not gone', async () => {
    const conv = await loaded()
    vi.mocked(api.rewind).mockResolvedValueOnce(plan(true))
    const t1 = conv.turns[0]!
    const preview = await conv.previewRewind(t1)
    expect(api.rewind).toHaveBeenLastCalledWith('prod1', 't1', true)
    expect(preview?.turns.map((t) => t.id)).toEqual(['t2', 't3'])
    expect(ids(conv)).toEqual(['t1', 't2', 't3'])

    vi.mocked(api.rewind).mockResolvedValueOnce(plan(false))
    await conv.rewindTo(t1)
    expect(api.rewind).toHaveBeenLastCalledWith('prod1', 't1', false)
    expect(ids(conv)).toEqual(['t1'])
    expect(conv.turns).toHaveLength(3)
    expect(conv.lastRewind).toEqual({ to: 't1', restore: 't3', turns: 2 })

    await conv.restoreRewind()
    expect(api.setHead).toHaveBeenLastCalledWith('prod1', 't3')
    expect(ids(conv)).toEqual(['t1', 't2', 't3'])
    expect(conv.lastRewind).toBeNull()
  })

  it('follows a head moved elsewhere (another tab rewound), ending the branch exactly there', async () => {
    const conv = await loaded()
    conv.apply({ type: 'head.moved', seq: 6, head: 't2' } as ServerMessage)
    expect(ids(conv)).toEqual(['t1', 't2'])
    // A new turn after the rewound head starts a branch of its own, and is followed.
    conv.apply({ type: 'turn.created', seq: 7, turn: makeTurn({ id: 't4', parent: 't2', depth: 2, created_at: at(4) }) })
    expect(ids(conv)).toEqual(['t1', 't2', 't4'])
  })

  it('loads a rewound production as the server left it: its head, not the newest leaf', async () => {
    const conv = await loaded('t1')
    expect(ids(conv)).toEqual(['t1'])
  })

  it('counts the cast state changes the socket announces', async () => {
    const conv = await loaded()
    conv.apply({ type: 'cast.state', seq: 6, turn: 't3' } as ServerMessage)
    expect(conv.castStateChanges).toBe(1)
  })
})
