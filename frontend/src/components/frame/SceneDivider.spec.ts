import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { makeScene } from '@/test/factories'
import SceneDivider from './SceneDivider.vue'

const q = (id: string) => `[data-testid="${id}"]`
const ended = makeScene({
  number: 1,
  status: 'closed',
  closed_seq: 4,
  closed_reason: 'gm',
  summary_status: 'done',
  summary: 'The lamp was lit.',
  summaries: [{ seat: 's1', name: 'Alice', text: 'I lit the lamp and kept the key.' }],
})

describe('SceneDivider', () => {
  it('names the scene and shows the reader the summaries of the one it ends', () => {
    const w = mount(SceneDivider, { props: { scene: makeScene({ number: 2, title: 'The docks', opened_seq: 4 }), previous: ended } })
    expect(w.find(q('scene-title')).text()).toBe('Scene 2 — The docks')
    expect(w.find(q('scene-summary')).text()).toContain('closed by the GM')
    expect(w.find(q('scene-own-summary')).text()).toContain('As you lived it')
    expect(w.find(q('scene-own-summary')).text()).toContain('kept the key')
    expect(w.text()).toContain('The lamp was lit.')
  })

  it('says the summaries are being written, and lets the GM retry failed ones', async () => {
    const writing = mount(SceneDivider, { props: { scene: makeScene({ number: 2 }), previous: { ...ended, summary_status: 'running' } } })
    expect(writing.find(q('scene-summary-writing')).exists()).toBe(true)
    const failed = { ...ended, summary_status: 'failed' as const, summary_error: 'The provider refused.' }
    expect(mount(SceneDivider, { props: { scene: makeScene({ number: 2 }), previous: failed } }).find(q('scene-retry')).exists()).toBe(false)
    const gm = mount(SceneDivider, { props: { scene: makeScene({ number: 2 }), previous: failed, gm: true } })
    expect(gm.text()).toContain('The provider refused.')
    await gm.find(q('scene-retry')).trigger('click')
    expect(gm.emitted('retry')).toEqual([[1]])
  })
})
