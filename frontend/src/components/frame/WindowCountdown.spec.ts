import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { ref } from 'vue'
import { MODEL_WAITS, type ModelWaits } from '@/lib/frame'
import { SEATS } from '@/test/factories'
import WindowCountdown from './WindowCountdown.vue'

const firing = { id: 'w1', seat: SEATS.alice, status: 'firing' as const, pscale: 0, opened_at: '', expires_at: null, remaining_seconds: 0 }

describe('WindowCountdown', () => {
  it('says the moment waits for the model, and how many calls go first, until it is sent', async () => {
    const waits = ref<ModelWaits>({ [SEATS.alice]: { step: 'outcome', ahead: 2 } })
    const w = mount(WindowCountdown, { props: { window: firing, now: 0 }, global: { provide: { [MODEL_WAITS as symbol]: waits } } })
    expect(w.text()).toBe('waiting for the model (2 ahead)')
    expect(w.attributes('title')).toContain('2 calls before this one')
    waits.value = {}
    await w.vm.$nextTick()
    expect(w.text()).toBe('writing the scene…')
  })

  it('shows the scene being written where nobody provides the waits', () => {
    expect(mount(WindowCountdown, { props: { window: firing, now: 0 } }).text()).toBe('writing the scene…')
  })
})
