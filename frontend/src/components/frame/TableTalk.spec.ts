import { describe, expect, it } from 'vitest'
import { mount } from '@vue/test-utils'
import TableTalk from './TableTalk.vue'
import { isolation, RTL } from '@/test/bidi'
import { makeSeat, SEATS } from '@/test/factories'

const talk = [
  { id: 't1', seat: SEATS.bob, author: 'bob', gm: false, text: 'brb, coffee', created_at: '2025-01-01T00:00:01Z' },
  { id: 't2', seat: null, author: 'gm', gm: true, text: 'Ten minutes.', created_at: '2025-01-01T00:00:02Z' },
]
const seats = [makeSeat({ id: SEATS.bob, name: 'Bob', player: 'bob' })]

describe('TableTalk', () => {
  it('shows who said what, the GM marked, and hides it all with one toggle', async () => {
    const wrapper = mount(TableTalk, { props: { talk, seats, busy: false } })
    const lines = wrapper.findAll('[data-testid="talk-message"]').map((m) => [m.get('.who').text(), m.get('.text').text()])
    expect(lines).toEqual([
      ['bob', 'brb, coffee'],
      ['GM', 'Ten minutes.'],
    ])
    expect(wrapper.findAll('.who.gm').map((w) => w.text())).toEqual(['GM'])
    await wrapper.get('[data-testid="talk-toggle"]').trigger('click')
    expect(wrapper.findAll('[data-testid="talk-message"]')).toHaveLength(0)
    expect(wrapper.get('[data-testid="talk-toggle"]').attributes('aria-expanded')).toBe('false')
  })

  it('lays out who said it and what in their own direction (RTL with quotes)', () => {
    const wrapper = mount(TableTalk, { props: { talk: [{ ...talk[0]!, author: RTL, text: RTL }], seats, busy: false } })
    const found = isolation(wrapper.element)
    expect(found).toHaveLength(2)
    expect(found.every(Boolean)).toBe(true)
  })

  it('says a trimmed message and clears the field; nothing for blanks', async () => {
    const wrapper = mount(TableTalk, { props: { talk: [], seats, busy: false } })
    const input = wrapper.get('[data-testid="talk-input"]')
    await input.setValue('   ')
    await wrapper.get('form').trigger('submit')
    expect(wrapper.emitted('say')).toBeUndefined()
    await input.setValue('  should we split up?  ')
    await wrapper.get('form').trigger('submit')
    expect(wrapper.emitted('say')).toEqual([['should we split up?']])
    expect((input.element as HTMLInputElement).value).toBe('')
  })
})
