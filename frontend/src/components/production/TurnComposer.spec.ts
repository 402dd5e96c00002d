import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import type { Draft } from '@/stores/conversation'
import { makeCast } from '@/test/factories'
import TurnComposer from './TurnComposer.vue'

const q = (id: string) => `[data-testid="${id}"]`
const cast = [makeCast('as1', 'Alice'), makeCast('as2', 'Bob')]
const mountComposer = (draft: Draft | null = null) =>
  mount(TurnComposer, { props: { cast, sending: false, draft, autoReply: false } })

describe('TurnComposer', () => {
  it('sends a director note by default, and a line as the chosen cast member', async () => {
    const w = mountComposer()
    expect(w.find(q('impersonate')).exists()).toBe(false)
    await w.find(q('director-input')).setValue('A phone rings.')
    await w.find('form').trigger('submit')
    await w.find(q('speak-as')).setValue('persona-as2')
    expect(w.find(q('director-input')).attributes('placeholder')).toContain('Write as Bob')
    await w.find(q('director-input')).setValue('*picks up* "Hello?"')
    await w.find(q('director-input')).trigger('keydown', { key: 'Enter', ctrlKey: true })
    expect(w.emitted('send')).toEqual([['A phone rings.', undefined], ['*picks up* "Hello?"', 'persona-as2']])
    expect((w.find(q('director-input')).element as HTMLTextAreaElement).value).toBe('')
  })

  it('streams a draft into the box, then leaves it to edit', async () => {
    const w = mountComposer()
    await w.find(q('speak-as')).setValue('persona-as1')
    await w.find(q('impersonate')).trigger('click')
    expect(w.emitted('impersonate')).toEqual([['persona-as1']])

    const draft: Draft = { id: 'd', persona: 'persona-as1', text: 'I think', count: 2, status: 'writing', error: '' }
    await w.setProps({ draft })
    const box = w.find(q('director-input')).element as HTMLTextAreaElement
    expect(box.value).toBe('I think')
    expect(box.readOnly).toBe(true)
    expect(w.find(q('impersonate')).text()).toContain('Drafting')
    expect(w.find(q('director-send')).attributes('disabled')).toBeDefined()

    await w.setProps({ draft: { ...draft, text: 'I think so.', status: 'done' } })
    expect(box.value).toBe('I think so.')
    expect(box.readOnly).toBe(false)
    expect(w.emitted('discardDraft')).toHaveLength(1)
  })

  it('says when a draft failed and offers to try again, keeping what was typed', async () => {
    const w = mountComposer()
    await w.find(q('speak-as')).setValue('persona-as1')
    await w.find(q('director-input')).setValue('my own words')
    await w.setProps({ draft: { id: 'd', persona: 'persona-as1', text: '', count: 0, status: 'failed', error: 'Model unreachable.' } })
    expect(w.find(q('draft-error')).text()).toContain('Model unreachable.')
    expect((w.find(q('director-input')).element as HTMLTextAreaElement).value).toBe('my own words')
  })

  it('switches auto-reply', async () => {
    const w = mountComposer()
    await w.find(q('auto-reply')).setValue(true)
    expect(w.emitted('autoReply')).toEqual([[true]])
  })
})
