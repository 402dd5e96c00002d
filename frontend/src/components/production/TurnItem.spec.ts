import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import type { Turn } from '@/api/types'
import { makeTurn } from '@/test/factories'
import TurnItem from './TurnItem.vue'

const q = (id: string) => `[data-testid="${id}"]`

function mountTurn(turn: Turn, extra: Partial<{ siblingIndex: number; siblingCount: number; showDirective: boolean; busy: boolean; restartAttempt: number }> = {}) {
  return mount(TurnItem, { props: { turn, siblingIndex: 1, siblingCount: 1, showDirective: false, busy: false, ...extra } })
}

describe('TurnItem', () => {
  it('shows speaker, model, tokens and latency of a finished turn', () => {
    const w = mountTurn(makeTurn({ id: 't', content: 'Hello.', model_id: 'gpt-4o', prompt_tokens: 120, completion_tokens: 8, latency_ms: 1530 }))
    expect(w.attributes('data-status')).toBe('done')
    expect(w.find(q('turn-speaker')).text()).toBe('Alice')
    expect(w.find(q('turn-model')).text()).toBe('gpt-4o')
    expect(w.find(q('turn-tokens')).text()).toBe('120 → 8 tokens')
    expect(w.find(q('turn-latency')).text()).toBe('1.5 s')
    expect(w.find(q('turn-regenerate')).exists()).toBe(true)
    expect(w.find(q('turn-typing')).exists()).toBe(false)
  })

  it('shows a typing indicator and a Stop button while streaming', async () => {
    const w = mountTurn(makeTurn({ id: 't', content: 'Hel', status: 'streaming' }))
    expect(w.find(q('turn-typing')).exists()).toBe(true)
    expect(w.find(q('turn-regenerate')).exists()).toBe(false)
    await w.find(q('turn-stop')).trigger('click')
    expect(w.emitted('stop')).toHaveLength(1)
  })

  it('shows the error and a Retry button on a failed turn', async () => {
    const w = mountTurn(makeTurn({ id: 't', status: 'failed', error: 'The model timed out.' }))
    expect(w.find(q('turn-error')).text()).toBe('The model timed out.')
    await w.find(q('turn-retry')).trigger('click')
    expect(w.emitted('regenerate')).toHaveLength(1)
  })

  it('has sibling arrows with a counter', async () => {
    const w = mountTurn(makeTurn({ id: 't', content: 'x' }), { siblingIndex: 2, siblingCount: 3 })
    expect(w.find(q('sibling-counter')).text()).toBe('2/3')
    await w.find(q('sibling-prev')).trigger('click')
    await w.find(q('sibling-next')).trigger('click')
    expect(w.emitted('sibling')).toEqual([[-1], [1]])
    expect(mountTurn(makeTurn({ id: 't' })).find(q('sibling-counter')).exists()).toBe(false)
  })

  it('opens the directive when show_directive is on (button or click on the turn)', async () => {
    const turn = makeTurn({ id: 't', content: 'x', directive: [{ role: 'system', content: 'You are Alice.' }] })
    const w = mountTurn(turn, { showDirective: true })
    await w.find(q('turn-directive')).trigger('click')
    await w.find(q('turn-content')).trigger('click')
    expect(w.emitted('directive')).toHaveLength(2)
    expect(mountTurn(turn).find(q('turn-directive')).exists()).toBe(false)
  })

  it('renders director turns without regenerate', () => {
    const w = mountTurn(makeTurn({ id: 'd', speaker_kind: 'director', assistant: null, content: 'Rain starts.' }))
    expect(w.attributes('data-speaker-kind')).toBe('director')
    expect(w.find(q('turn-speaker')).text()).toBe('Director')
    expect(w.find(q('turn-regenerate')).exists()).toBe(false)
  })

  it('notes a turn being written again after its worker was lost, while it is active', () => {
    const w = mountTurn(makeTurn({ id: 't', status: 'pending' }), { restartAttempt: 2 })
    expect(w.find(q('turn-restarted')).text()).toBe('Worker lost — writing again (attempt 2)')
    expect(mountTurn(makeTurn({ id: 't', content: 'x' }), { restartAttempt: 2 }).find(q('turn-restarted')).exists()).toBe(false)
  })

  it('renders Markdown safely: actions, speech, and typed tags as text', () => {
    const w = mountTurn(makeTurn({ id: 't', content: '*waves* "Hi!" <b>bold?</b>' }))
    const content = w.find(q('turn-content'))
    expect(content.find('em').text()).toBe('waves')
    expect(content.find('.rp-speech').text()).toBe('"Hi!"')
    expect(content.find('b').exists()).toBe(false)
    expect(content.text()).toContain('<b>bold?</b>')
  })

  it('edits in place: saves with the new text, closes once saved, Escape cancels', async () => {
    const saved: string[] = []
    const w = mount(TurnItem, {
      props: { turn: makeTurn({ id: 't', content: 'Teh typo.' }), siblingIndex: 1, siblingCount: 1, showDirective: false, busy: false, save: async (c: string) => (saved.push(c), true) },
    })
    await w.find(q('turn-edit')).trigger('click')
    const box = w.find(q('turn-edit-input'))
    expect((box.element as HTMLTextAreaElement).value).toBe('Teh typo.')
    await box.setValue('The fix.')
    await w.find(q('turn-editor')).trigger('submit')
    await new Promise((r) => setTimeout(r))
    expect(saved).toEqual(['The fix.'])
    expect(w.find(q('turn-editor')).exists()).toBe(false)

    await w.find(q('turn-edit')).trigger('click')
    await w.find(q('turn-edit-input')).trigger('keydown', { key: 'Escape' })
    expect(w.find(q('turn-editor')).exists()).toBe(false)
  })

  it('offers continue on the last turn, delete everywhere, and says where other versions go on', async () => {
    const w = mountTurn(makeTurn({ id: 't', content: 'Hello.' }), { siblingIndex: 2, siblingCount: 2 })
    expect(w.find(q('turn-continue')).exists()).toBe(false)
    await w.setProps({ canContinue: true, elsewhere: [{ version: 1, later: 3 }] })
    await w.find(q('turn-continue')).trigger('click')
    await w.find(q('turn-delete')).trigger('click')
    expect(w.emitted('continue')).toHaveLength(1)
    expect(w.emitted('delete')).toHaveLength(1)
    expect(w.find(q('turn-elsewhere')).text()).toContain('version 1 goes on for 3 more turns')
  })

  it('marks a line written as the character, without model stats or regenerate', () => {
    const w = mountTurn(makeTurn({ id: 't', speaker_kind: 'persona', content: 'Mine.', edited_at: '2025-01-01T00:00:00Z' }))
    expect(w.find(q('turn-written')).exists()).toBe(true)
    expect(w.find(q('turn-edited')).exists()).toBe(true)
    expect(w.find(q('turn-regenerate')).exists()).toBe(false)
    expect(w.find(q('turn-tokens')).exists()).toBe(false)
  })

  it('shows the error of a continuation that failed on a finished turn', () => {
    const w = mountTurn(makeTurn({ id: 't', content: 'Kept text.', error: 'The model timed out.' }))
    expect(w.find(q('turn-error')).text()).toBe('The model timed out.')
    expect(w.find(q('turn-content')).text()).toContain('Kept text.')
  })

  it('offers "Rewind to here" only where later turns follow, and not while busy', async () => {
    const turn = makeTurn({ id: 't', content: 'Hello.' })
    expect(mountTurn(turn).find(q('turn-rewind')).exists()).toBe(false)
    const w = mount(TurnItem, { props: { turn, siblingIndex: 1, siblingCount: 1, showDirective: false, busy: false, canRewind: true } })
    await w.find(q('turn-rewind')).trigger('click')
    expect(w.emitted('rewind')).toHaveLength(1)
    await w.setProps({ busy: true })
    expect(w.find(q('turn-rewind')).attributes('disabled')).toBeDefined()
  })
})
