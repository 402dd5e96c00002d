import { afterEach, describe, expect, it, vi } from 'vitest'
import { mount } from '@vue/test-utils'
import TableTalk from './TableTalk.vue'
import type { TalkMessage } from '@/api/types'
import { isolation, RTL } from '@/test/bidi'
import { makeSeat, SEATS } from '@/test/factories'

const talk: TalkMessage[] = [
  { id: 't1', kind: 'say', seat: SEATS.bob, author: 'bob', gm: false, text: 'brb, coffee', created_at: '2025-01-01T00:00:01Z' },
  { id: 't2', kind: 'say', seat: null, author: 'gm', gm: true, text: 'Ten minutes.', created_at: '2025-01-01T00:00:02Z' },
]
const seats = [makeSeat({ id: SEATS.bob, name: 'Bob', player: 'bob' })]
const notice = (id: string, kind: TalkMessage['kind'], author: string | null, at: string): TalkMessage => ({
  id,
  kind,
  seat: SEATS.bob,
  author,
  gm: false,
  text: '',
  created_at: at,
})

afterEach(() => {
  vi.useRealTimers()
})

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

  it('shows when each message was said, relative, with the exact time on hover, and keeps it current', async () => {
    vi.useFakeTimers()
    vi.setSystemTime(new Date('2025-01-01T00:02:00Z'))
    const wrapper = mount(TableTalk, { props: { talk, seats, busy: false } })
    const times = wrapper.findAll('[data-testid="talk-message"] time')
    expect(times.map((t) => t.text())).toEqual(['2 min ago', '2 min ago'])
    expect(times[0]!.attributes('datetime')).toBe('2025-01-01T00:00:01Z')
    expect(times[0]!.attributes('title')).toContain('2025')
    await vi.advanceTimersByTimeAsync(3 * 60_000)
    expect(wrapper.findAll('[data-testid="talk-message"] time').map((t) => t.text())).toEqual(['5 min ago', '5 min ago'])
    wrapper.unmount()
  })

  it('shows who joined, left or was removed as notices by the seat\'s public name, apart from what was said', () => {
    const covert = makeSeat({ id: SEATS.bob, name: 'The Stranger', player: null })
    const notices = [
      notice('n1', 'join', 'ana', '2025-01-01T00:00:00Z'),
      talk[0]!,
      notice('n2', 'leave', 'ana', '2025-01-01T00:00:03Z'),
      notice('n3', 'kick', RTL, '2025-01-01T00:00:04Z'),
      notice('n4', 'join', null, '2025-01-01T00:00:05Z'),
    ]
    const wrapper = mount(TableTalk, { props: { talk: notices, seats: [covert], busy: false } })
    const lines = wrapper.findAll('[data-testid="talk-notice-text"]').map((n) => n.text())
    expect(lines).toEqual([
      'ana joined as The Stranger',
      "ana left The Stranger's seat",
      `The GM removed ${RTL} from The Stranger's seat`,
      'A player joined as The Stranger',
    ])
    expect(wrapper.findAll('li').map((li) => li.attributes('data-testid'))).toEqual([
      'talk-notice',
      'talk-message',
      'talk-notice',
      'talk-notice',
      'talk-notice',
    ])
    const kicked = wrapper.findAll('[data-testid="talk-notice"]')[2]!
    expect(kicked.find('.who').exists()).toBe(false) // no author line, no avatar
    expect(isolation(kicked.element).every(Boolean)).toBe(true)
    expect(wrapper.findAll('[data-testid="talk-notice"] time')).toHaveLength(4)
    expect(wrapper.get('.count').text()).toBe('1') // only what was said is counted
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
