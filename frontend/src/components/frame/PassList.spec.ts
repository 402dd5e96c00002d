import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import type { PassInfo } from '@/api/types'
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
