import { afterEach, describe, expect, it } from 'vitest'
import { mount } from '@vue/test-utils'
import StoryRecap from './StoryRecap.vue'
import { exportUrl } from '@/api/frames'
import { fromSnapshot, storySoFar } from '@/lib/frame'
import { makeFrameView, makeNarrative, makeOutcome, SEATS } from '@/test/factories'

const names: Record<string, string> = { [SEATS.alice]: 'Alice', [SEATS.bob]: 'Bob' }
const nameOf = (seat: string) => names[seat] ?? 'Someone'
const story = [
  makeNarrative({ id: 'n1', text: 'The *lamp* flickers and goes out.', status: 'done', created_at: '2025-01-01T00:00:11Z' }),
  makeNarrative({ id: 'n2', text: 'Rain on the window.', shared: true, status: 'done', created_at: '2025-01-01T00:00:20Z' }),
  makeNarrative({ id: 'n3', seat: SEATS.bob, text: 'Bob hears <b>steps</b>.', status: 'streaming', created_at: '2025-01-01T00:00:30Z' }),
]

afterEach(() => {
  document.body.innerHTML = ''
})

describe('StoryRecap', () => {
  it('offers the frame’s export as Markdown and JSON downloads', () => {
    const wrapper = mount(StoryRecap, { props: { frameId: 'frame 1', narratives: [], nameOf } })
    const md = wrapper.get('[data-testid="export-md"]')
    const json = wrapper.get('[data-testid="export-json"]')
    expect(md.attributes('href')).toBe('/api/frames/frame%201/export?format=md')
    expect(json.attributes('href')).toBe(exportUrl('frame 1', 'json'))
    expect(md.attributes()).toHaveProperty('download')
    expect(json.attributes()).toHaveProperty('download')
    expect(wrapper.get('[data-testid="recap-empty"]').text()).toContain('Your story begins')
    expect(wrapper.get('[data-testid="recap-count"]').text()).toBe('0 passages')
  })

  it('shows the latest passage and reads the whole story in order in a dialog', async () => {
    const wrapper = mount(StoryRecap, { props: { frameId: 'f1', narratives: story, nameOf, gm: true }, attachTo: document.body })
    expect(wrapper.get('[data-testid="recap-count"]').text()).toBe('3 passages')
    const latest = wrapper.get('[data-testid="recap-read"]')
    expect(latest.text()).toContain('Bob')
    expect(latest.text()).toContain('Bob hears <b>steps</b>.') // as text, never as markup
    await latest.trigger('click')
    const passages = [...document.querySelectorAll('[data-testid="recap-modal"] [data-testid="recap-passage"]')]
    expect(passages.map((p) => p.querySelector('.label span')?.textContent)).toEqual(['1. Alice', '2. The scene', '3. Bob'])
    expect(passages[0]!.querySelector('em')?.textContent).toBe('lamp')
    expect(passages[2]!.querySelector('b')).toBeNull()
    expect(passages[2]!.textContent).toContain('being written')
    wrapper.unmount()
  })

  it('is fed the reader’s narratives with text, in the feed’s order', () => {
    const view = makeFrameView({
      outcomes: [makeOutcome({ id: 'o1', seq: 1, created_at: '2025-01-01T00:00:10Z' })],
      narratives: [
        makeNarrative({ id: 'late', text: 'Second.', status: 'done', created_at: '2025-01-01T00:00:40Z' }),
        makeNarrative({ id: 'empty', text: '  ', created_at: '2025-01-01T00:00:45Z' }),
        makeNarrative({ id: 'early', text: 'First.', status: 'done', created_at: '2025-01-01T00:00:12Z' }),
      ],
    })
    expect(storySoFar(fromSnapshot(view)).map((n) => n.id)).toEqual(['early', 'late'])
  })
})
