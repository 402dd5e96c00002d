import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import type { PassInfo, PassTry } from '@/api/types'
import { SEATS } from '@/test/factories'
import PassList from './PassList.vue'

const pass = (over: Partial<PassInfo> & { id: string }): PassInfo => ({
  seat: SEATS.alice,
  kind: 'medium',
  trigger: 'commit',
  status: 'done',
  liquid: null,
  window: null,
  interrupt: null,
  messages: [],
  tries: [],
  error: '',
  attempts: 1,
  created_at: '2026-11-23T20:00:00Z',
  calls: [],
  ...over,
})

describe('PassList', () => {
  it('says what interrupted a pass, and nothing of a pass nobody interrupted', () => {
    const w = mount(PassList, {
      props: {
        passes: [
          pass({ id: 'p1' }),
          pass({ id: 'p2', trigger: 'interrupt', interrupt: { outcome: 'o1', reason: 'Bob shoves her.' } }),
        ],
        nameOf: () => 'Alice',
        busy: null,
      },
    })
    const note = (id: string) => w.find(`[data-pass-id="${id}"] .note`)
    expect(note('p1').exists()).toBe(false)
    expect(note('p2').text()).toBe('Interrupted: Bob shoves her.')
  })
})

describe('PassList skills', () => {
  it('names the skills that shaped each step and whose they are', () => {
    const skills = [
      { id: 's1', scope: 'frame', category: 'tone', name: 'Noir' },
      { id: 's2', scope: 'platform', category: 'agency', name: 'Others keep their agency' },
    ]
    const w = mount(PassList, {
      props: {
        passes: [pass({ id: 'p1', messages: [{ step: 'bones', attempt: 1, messages: [{ role: 'user', content: 'x' }], skills }] })],
        nameOf: () => 'Alice',
        busy: null,
      },
    })
    const badges = w.findAll('[data-testid="pass-skills"] .badge')
    expect(badges.map((b) => b.text())).toEqual(['Noir · this frame', 'Others keep their agency · LMiX'])
  })
})

describe('PassList faces', () => {
  it('offers a retry of a failed author or designer pass, the GM’s own named so', async () => {
    const w = mount(PassList, {
      props: {
        passes: [pass({ id: 'a', kind: 'author', seat: null, status: 'failed', error: 'No.' }), pass({ id: 's', kind: 'soft', status: 'failed' })],
        nameOf: () => 'Alice',
        busy: null,
      },
    })
    expect(w.find('[data-pass-id="a"] .who').text()).toBe('The GM')
    expect(w.find('[data-pass-id="s"] [data-testid="pass-retry"]').exists()).toBe(false)
    await w.find('[data-pass-id="a"] [data-testid="pass-retry"]').trigger('click')
    expect(w.emitted('retry')?.[0]?.[0]).toMatchObject({ id: 'a' })
  })
})

describe('PassList tries', () => {
  const sent = [
    { role: 'system', content: 'Resolve the moment.' },
    { role: 'user', content: 'ACTIONS TO RESOLVE\n1. [Alice] I open the gate.\nAnswer with JSON matching this schema: {...}' },
  ]
  const tries: [PassTry, PassTry] = [
    { step: 'bones', attempt: 1, mode: 'json_schema', messages: sent, raw: '{"INTERRUPTED": {}}', error: 'Extra inputs are not permitted: INTERRUPTED' },
    {
      step: 'bones',
      attempt: 1,
      mode: 'json_schema',
      messages: [...sent, { role: 'assistant', content: '{"INTERRUPTED": {}}' }, { role: 'user', content: 'Fix it: expected Alice.' }],
      raw: '{"actions_resolved": []}',
      error: 'The answer did not resolve the committed actions: expected Alice; missing Alice.',
    },
  ]
  const mountWith = (over: Partial<PassInfo>) =>
    mount(PassList, {
      props: {
        passes: [
          pass({
            id: 'p1',
            status: 'failed',
            error: 'The answer did not resolve the committed actions: expected Alice; missing Alice. (2 tries.) It answered: {"actions_resolved": []}',
            messages: [{ step: 'bones', attempt: 1, messages: sent }],
            tries,
            ...over,
          }),
        ],
        nameOf: () => 'Alice',
        busy: null,
      },
    })

  it('shows a failed pass each raw answer, why it was refused, and exactly what was sent, collapsed', () => {
    const w = mountWith({})
    const box = w.find('[data-testid="pass-tries"]')
    expect(box.exists()).toBe(true)
    expect(box.attributes('open')).toBeUndefined() // collapsed by default
    expect(box.find('summary').text()).toBe('Model answers (2) · 2 refused')
    const items = w.findAll('[data-testid="pass-try"]')
    expect(items.map((t) => t.find('[data-testid="try-raw"]').text())).toEqual(['{"INTERRUPTED": {}}', '{"actions_resolved": []}'])
    expect(items.map((t) => t.find('[data-testid="try-error"]').text())).toEqual([tries[0].error, tries[1].error])
    // The repair try shows the conversation as sent: the schema instruction and the feedback.
    const repair = items[1]!.find('details.sent')
    expect(repair.attributes('open')).toBeUndefined()
    expect(repair.find('summary').text()).toContain('4 messages')
    expect(repair.text()).toContain('Answer with JSON matching this schema')
    expect(repair.text()).toContain('Fix it: expected Alice.')
    const messages = w.find('[data-testid="pass-messages"]')
    expect(messages.attributes('open')).toBeUndefined()
    expect(messages.find('summary').text()).toBe('Messages sent (2)')
    expect(messages.text()).toContain('bones')
    expect(messages.text()).toContain('1. [Alice] I open the gate.')
  })

  it('marks an accepted try and keeps tries out of a pass still running', () => {
    const done = mountWith({ status: 'done', error: '', tries: [{ ...tries[1], raw: '{"actions_resolved": [{"seat": "Alice"}]}', error: '' }] })
    expect(done.find('[data-testid="pass-tries"] summary').text()).toBe('Model answers (1)')
    expect(done.find('[data-testid="pass-try"] .badge').text()).toBe('accepted')
    expect(done.find('[data-testid="try-error"]').exists()).toBe(false)
    expect(mountWith({ status: 'running', error: '' }).find('[data-testid="pass-tries"]').exists()).toBe(false)
  })
})

describe('PassList repairs', () => {
  const sent = [{ role: 'user', content: 'ACTION: I wait by the door.' }]
  const raw = '{"pscale": 9, "window_seconds": 10000}'

  it('shows which numbers of an accepted answer were clamped into range, and counts them', () => {
    const repaired = [
      { path: 'pscale', given: 9, used: 2 },
      { path: 'window_seconds', given: 10000, used: 3600 },
    ]
    const w = mount(PassList, {
      props: {
        passes: [pass({ id: 'p1', kind: 'soft', tries: [{ step: 'soft', attempt: 1, messages: sent, raw, error: '', repaired }] })],
        nameOf: () => 'Alice',
        busy: null,
      },
    })
    expect(w.find('[data-testid="pass-tries"] summary').text()).toBe('Model answers (1) · 1 repaired')
    expect(w.find('[data-testid="pass-try"] .badge').text()).toBe('accepted')
    expect(w.find('[data-testid="try-repaired"]').text()).toBe('Repaired: pscale 9 → 2, window_seconds 10000 → 3600')
  })

  it('says nothing of repairs on an answer taken as it came', () => {
    const w = mount(PassList, {
      props: {
        passes: [pass({ id: 'p1', kind: 'soft', tries: [{ step: 'soft', attempt: 1, messages: sent, raw, error: '' }] })],
        nameOf: () => 'Alice',
        busy: null,
      },
    })
    expect(w.find('[data-testid="pass-tries"] summary').text()).toBe('Model answers (1)')
    expect(w.find('[data-testid="try-repaired"]').exists()).toBe(false)
  })
})
