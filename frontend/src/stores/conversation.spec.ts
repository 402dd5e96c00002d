import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import * as api from '@/api/productions'
import type { ServerMessage, Turn } from '@/api/types'
import { makeDetail, makeTurn } from '@/test/factories'
import { useConversationStore } from './conversation'
import { useToastsStore } from './toasts'

// Without `attempt`, as an older server sent it: the client still takes it.
const token = (turn: string, index: number, delta: string) => ({ type: 'turn.token', turn, index, delta }) as ServerMessage

vi.mock('@/api/productions', () => ({
  productionsApi: {},
  getProduction: vi.fn(),
  createTurn: vi.fn(),
  stopTurn: vi.fn(),
  setHead: vi.fn(() => Promise.resolve({ turn: '' })),
  startAutoplay: vi.fn(),
  stopAutoplay: vi.fn(),
  editTurn: vi.fn(),
  deleteTurn: vi.fn(() => Promise.resolve()),
  continueTurn: vi.fn(),
  impersonate: vi.fn(() => Promise.resolve({ draft: '' })),
  updateProduction: vi.fn(),
  productionSocketUrl: vi.fn(),
}))

const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString()

// t1 (Alice) → t2 (Bob) → t3 (Alice)
function baseTurns(): Turn[] {
  return [
    makeTurn({ id: 't1', assistant: 'as1', speaker_name: 'Alice', content: 'Hello.', created_at: at(1) }),
    makeTurn({ id: 't2', parent: 't1', depth: 1, assistant: 'as2', speaker_name: 'Bob', content: 'Hi.', created_at: at(2) }),
    makeTurn({ id: 't3', parent: 't2', depth: 2, assistant: 'as1', speaker_name: 'Alice', content: 'How are you?', created_at: at(3) }),
  ]
}

async function loaded(turns = baseTurns(), seq = 10) {
  setActivePinia(createPinia())
  vi.mocked(api.getProduction).mockResolvedValue(makeDetail({ turns, head: turns.at(-1)?.id ?? null, event_seq: seq }))
  const conv = useConversationStore()
  await conv.load('prod1')
  return conv
}

const ids = (conv: ReturnType<typeof useConversationStore>) => conv.path.map((p) => p.turn.id)

describe('conversation store', () => {
  beforeEach(() => {
    vi.mocked(api.createTurn).mockReset()
    vi.mocked(api.getProduction).mockReset()
    vi.mocked(api.startAutoplay).mockReset()
  })

  it('shows the branch ending at the server head', async () => {
    const conv = await loaded()
    expect(ids(conv)).toEqual(['t1', 't2', 't3'])
    expect(conv.production?.world_name).toBe('Modern NYC')
  })

  it('asks an assistant to speak after the last visible turn and shows the pending turn', async () => {
    const conv = await loaded()
    vi.mocked(api.createTurn).mockResolvedValue(makeTurn({ id: 't4', parent: 't3', assistant: 'as2', status: 'pending', created_at: at(4) }))
    await conv.speak('as2')
    expect(api.createTurn).toHaveBeenCalledWith('prod1', { assistant: 'as2', parent: 't3' })
    expect(ids(conv)).toEqual(['t1', 't2', 't3', 't4'])
    expect(conv.isGenerating).toBe(true)
  })

  it('lets the server pick with "next", and starts from null on an empty production', async () => {
    const conv = await loaded([])
    vi.mocked(api.createTurn).mockResolvedValue(makeTurn({ id: 'r', status: 'pending', created_at: at(1) }))
    await conv.speak()
    expect(api.createTurn).toHaveBeenCalledWith('prod1', { parent: null })
  })

  it('regenerates as a sibling (same assistant, same parent) and shows it', async () => {
    const conv = await loaded()
    const t2 = conv.turns.find((t) => t.id === 't2')!
    vi.mocked(api.createTurn).mockResolvedValue(
      makeTurn({ id: 't2b', parent: 't1', depth: 1, assistant: 'as2', status: 'pending', created_at: at(9) }),
    )
    await conv.regenerate(t2)
    expect(api.createTurn).toHaveBeenCalledWith('prod1', { assistant: 'as2', parent: 't1' })
    expect(ids(conv)).toEqual(['t1', 't2b'])
    expect(conv.path[1]).toMatchObject({ siblingIndex: 2, siblingCount: 2 })

    // Back to the first version: its descendants come back with it.
    conv.showSibling(conv.path[1]!.turn, -1)
    expect(ids(conv)).toEqual(['t1', 't2', 't3'])
    expect(api.setHead).toHaveBeenLastCalledWith('prod1', 't3')
  })

  it('posts director notes at the end of the visible branch', async () => {
    const conv = await loaded()
    vi.mocked(api.createTurn).mockResolvedValue(
      makeTurn({ id: 'd1', parent: 't3', speaker_kind: 'director', assistant: null, content: 'A phone rings.', created_at: at(5) }),
    )
    await conv.sendDirector('A phone rings.')
    expect(api.createTurn).toHaveBeenCalledWith('prod1', { content: 'A phone rings.', parent: 't3' })
    expect(ids(conv).at(-1)).toBe('d1')
  })

  it('shows a toast on 409 (already generating)', async () => {
    const conv = await loaded()
    vi.mocked(api.createTurn).mockRejectedValue(new ApiError(409, 'A turn is already being generated.'))
    await conv.speak('as1')
    expect(useToastsStore().toasts.map((t) => [t.kind, t.message])).toEqual([['error', 'A turn is already being generated.']])
  })

  it('starts autoplay from the end of the visible branch', async () => {
    const conv = await loaded()
    vi.mocked(api.startAutoplay).mockResolvedValue({ autoplay_remaining: 5 })
    await conv.startAutoplay(5)
    expect(api.startAutoplay).toHaveBeenCalledWith('prod1', 5, 't3')
    expect(conv.autoplayRemaining).toBe(5)
  })

  it('streams socket events into the visible branch', async () => {
    const conv = await loaded(baseTurns(), 10)
    conv.apply({ type: 'turn.created', seq: 11, turn: makeTurn({ id: 't4', parent: 't3', status: 'pending', created_at: at(4) }) })
    expect(conv.tokenPosition('t4')).toBe(0)
    conv.apply(token('t4', 0, 'Fine, '))
    conv.apply(token('t4', 1, 'thanks'))
    expect(conv.tokenPosition('t4')).toBe(2)
    expect(ids(conv)).toEqual(['t1', 't2', 't3', 't4'])
    expect(conv.path.at(-1)?.turn).toMatchObject({ content: 'Fine, thanks', status: 'streaming' })
    conv.apply({
      type: 'turn.done',
      seq: 12,
      turn: makeTurn({ id: 't4', parent: 't3', content: 'Fine, thanks.', status: 'done', completion_tokens: 3, created_at: at(4) }),
    })
    expect(conv.path.at(-1)?.turn).toMatchObject({ content: 'Fine, thanks.', status: 'done', completion_tokens: 3 })
    expect(conv.tokenPosition('t4')).toBe(Infinity)
    expect(api.getProduction).toHaveBeenCalledTimes(1)
  })

  it('shows a restarted turn being written again, then finished', async () => {
    const live = makeTurn({ id: 't4', parent: 't3', status: 'streaming', content: 'Half', token_count: 1, created_at: at(4) })
    const conv = await loaded([...baseTurns(), live], 10)
    conv.apply({ type: 'turn.restarted', seq: 11, attempt: 2, turn: { ...live, status: 'pending', content: '', token_count: 0 } })
    expect(conv.path.at(-1)?.turn).toMatchObject({ status: 'pending', content: '' })
    expect(conv.restarts).toEqual({ t4: 2 })
    conv.apply(token('t4', 0, 'Whole'))
    expect(conv.path.at(-1)?.turn).toMatchObject({ status: 'streaming', content: 'Whole' })
    conv.apply({ type: 'turn.done', seq: 12, turn: { ...live, status: 'done', content: 'Whole.', token_count: 2 } })
    expect(conv.restarts).toEqual({})
  })

  it('re-reads with the seq it knows: streamed text ahead of the checkpoint is kept only if no event was missed', async () => {
    const live = makeTurn({ id: 't4', parent: 't3', status: 'streaming', content: '', token_count: 0, created_at: at(4) })
    const conv = await loaded([...baseTurns(), live], 10)
    conv.apply(token('t4', 0, 'One '))
    conv.apply(token('t4', 1, 'two'))
    const checkpoint = { ...live, content: 'One ', token_count: 1 }
    vi.mocked(api.getProduction).mockResolvedValue(makeDetail({ turns: [...baseTurns(), checkpoint], head: 't4', event_seq: 10 }))
    expect(await conv.load('prod1', { since: 10 })).toBe(10)
    expect(conv.path.at(-1)?.turn).toMatchObject({ content: 'One two', token_count: 2 })
    // With an event missed (seq 11 unknown here), the snapshot is the truth.
    vi.mocked(api.getProduction).mockResolvedValue(makeDetail({ turns: [...baseTurns(), checkpoint], head: 't4', event_seq: 11 }))
    expect(await conv.load('prod1', { since: 10 })).toBe(11)
    expect(conv.path.at(-1)?.turn).toMatchObject({ content: 'One ', token_count: 1 })
  })

  it('records a failed read and rejects, so the socket retries it', async () => {
    const conv = await loaded()
    vi.mocked(api.getProduction).mockRejectedValue(new ApiError(503, 'Down.'))
    await expect(conv.load('prod1', { since: 10 })).rejects.toThrow('Down.')
    expect(conv.loadError?.status).toBe(503)
    expect(ids(conv)).toEqual(['t1', 't2', 't3'])
  })

  it('does not jump to a branch someone else extends', async () => {
    const conv = await loaded()
    // A turn under t1 (not the end of the visible branch) arrives.
    conv.apply({ type: 'turn.created', seq: 11, turn: makeTurn({ id: 'x', parent: 't1', created_at: at(8) }) })
    expect(ids(conv)).toEqual(['t1', 't2', 't3'])
    expect(conv.path[1]).toMatchObject({ siblingIndex: 1, siblingCount: 2 })
  })

  it('reads the directives of live turns to show one (socket turns carry none), keeping the rest', async () => {
    const live = makeTurn({ id: 't4', parent: 't3', status: 'streaming', content: 'Still going', token_count: 2, created_at: at(4) })
    const conv = await loaded([...baseTurns(), live], 10)
    conv.production!.show_directive = true
    const withDirective = [...baseTurns(), { ...live, content: 'Still', token_count: 1 }].map((t) => ({
      ...t,
      directive: [{ role: 'system', content: `You are ${t.speaker_name}.` }],
    }))
    vi.mocked(api.getProduction).mockResolvedValue(makeDetail({ show_directive: true, turns: withDirective, head: 't4', event_seq: 12 }))
    await conv.openDirective(conv.turns[2]!)
    expect(api.getProduction).toHaveBeenCalledTimes(2)
    expect(conv.directiveTurn?.directive).toEqual([{ role: 'system', content: 'You are Alice.' }])
    // Only directives were taken: the streaming text is not set back to the checkpoint.
    expect(conv.turns[3]).toMatchObject({ content: 'Still going', token_count: 2 })
    // A later socket copy without the directive keeps it.
    conv.apply({ type: 'turn.done', seq: 11, turn: { ...baseTurns()[2]!, content: 'Edited' } })
    expect(conv.directiveTurn).toMatchObject({ content: 'Edited', directive: [{ role: 'system', content: 'You are Alice.' }] })
  })

  it('speaks as a cast member and follows an auto-reply the socket brought first', async () => {
    const conv = await loaded()
    const line = makeTurn({ id: 't4', parent: 't3', speaker_kind: 'persona', assistant: 'as2', content: 'Me.', created_at: at(4) })
    const reply = makeTurn({ id: 't5', parent: 't4', assistant: 'as1', status: 'pending', content: '', created_at: at(5) })
    vi.mocked(api.createTurn).mockImplementation(async () => {
      // The socket delivers the line and the next speaker's reply before the POST answers.
      conv.apply({ type: 'turn.created', seq: 11, turn: line })
      conv.apply({ type: 'turn.created', seq: 12, turn: reply })
      return line
    })
    await conv.send('Me.', 'persona-as2')
    expect(api.createTurn).toHaveBeenCalledWith('prod1', { content: 'Me.', persona: 'persona-as2', parent: 't3' })
    expect(ids(conv)).toEqual(['t1', 't2', 't3', 't4', 't5'])
  })

  it('deletes a turn keeping the later ones, one level up', async () => {
    const conv = await loaded()
    expect(conv.laterTurns(conv.turns[1]!)).toBe(1)
    await conv.deleteTurn(conv.turns[1]!, 'keep')
    expect(api.deleteTurn).toHaveBeenCalledWith('prod1', 't2', 'keep')
    expect(ids(conv)).toEqual(['t1', 't3'])
    expect(conv.turns.find((t) => t.id === 't3')).toMatchObject({ parent: 't1', depth: 1 })
  })

  it('deletes a branch and shows what is left', async () => {
    const conv = await loaded()
    await conv.deleteTurn(conv.turns[1]!, 'delete')
    expect(ids(conv)).toEqual(['t1'])
    // Another page's deletion arrives as an event: the viewed leaf goes, its head is shown.
    conv.apply({ type: 'turns.deleted', seq: 11, turns: ['t1'], reparented: [], head: null })
    expect(ids(conv)).toEqual([])
  })

  it('says where the turns hidden by another version are', async () => {
    const turns = [...baseTurns(), makeTurn({ id: 't2b', parent: 't1', depth: 1, assistant: 'as2', content: 'Other.', created_at: at(4) })]
    const conv = await loaded(turns)
    // The head is the new version: the two turns after the old one are elsewhere.
    expect(ids(conv)).toEqual(['t1', 't2b'])
    expect(conv.elsewhere(conv.path[1]!)).toEqual([{ version: 1, later: 1 }])
  })

  it('edits a turn and continues the last one from its text', async () => {
    const conv = await loaded()
    vi.mocked(api.editTurn).mockResolvedValue({ ...conv.turns[2]!, content: 'Fixed.', edited_at: at(9) })
    expect(await conv.editTurn(conv.turns[2]!, 'Fixed.')).toBe(true)
    expect(conv.turns[2]!.content).toBe('Fixed.')

    vi.mocked(api.continueTurn).mockResolvedValue({ ...conv.turns[2]!, status: 'pending', attempts: 1, token_count: 3 })
    await conv.continueTurn(conv.turns[2]!)
    const turn = conv.turns[2]!
    expect(turn).toMatchObject({ status: 'pending', content: 'Fixed.', attempts: 2 })
    // The new run's deltas append to the text; none restarts it.
    expect(conv.apply({ type: 'turn.token', turn: 't3', attempt: 2, index: 3, delta: ' And more.' })).toBe(true)
    expect(conv.turns[2]!.content).toBe('Fixed. And more.')
  })

  it('streams an impersonation draft and keeps only its own deltas', async () => {
    const conv = await loaded()
    await conv.impersonate('persona-as1')
    const id = vi.mocked(api.impersonate).mock.calls[0]![3]
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    conv.apply({ type: 'draft.token', draft: id, index: 0, delta: 'I ' })
    conv.apply({ type: 'draft.token', draft: 'other', index: 1, delta: 'NOT MINE' })
    conv.apply({ type: 'draft.token', draft: id, index: 0, delta: 'I ' }) // duplicate
    conv.apply({ type: 'draft.token', draft: id, index: 1, delta: 'agree' })
    expect(conv.draft).toMatchObject({ text: 'I agree', status: 'writing', persona: 'persona-as1' })
    conv.apply({ type: 'draft.done', draft: id, content: 'I agree.' })
    expect(conv.draft).toMatchObject({ text: 'I agree.', status: 'done' })
  })
})
