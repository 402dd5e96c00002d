import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import RewindDialog from './RewindDialog.vue'

const q = (id: string) => `[data-testid="${id}"]`
const plan = {
  to: 't1',
  dry_run: true,
  head: 't3',
  restore: 't3',
  turns: [
    { id: 't2', speaker_name: 'Bob', excerpt: 'BOB-LINE' },
    { id: 't3', speaker_name: 'Alice', excerpt: 'ALICE-LINE' },
  ],
  state_deltas: 6,
  memories: 1,
}

describe('RewindDialog', () => {
  it('says what the rewind undoes before it is confirmed', async () => {
    const w = mount(RewindDialog, { props: { open: true, speaker: 'Alice', plan, busy: false }, attachTo: document.body })
    const text = document.body.textContent ?? ''
    expect(text).toContain('BOB-LINE')
    expect(text).toContain('ALICE-LINE')
    expect(document.querySelector(q('rewind-state'))?.textContent).toMatch(/1 memory and\s+6 changes/)
    ;(document.querySelector(q('rewind-confirm')) as HTMLButtonElement).click()
    expect(w.emitted('confirm')).toHaveLength(1)
    w.unmount()
  })

  it('cannot be confirmed while the dry run loads', () => {
    const w = mount(RewindDialog, { props: { open: true, speaker: 'Alice', plan: null, busy: false }, attachTo: document.body })
    expect(document.querySelector(q('rewind-loading'))).not.toBeNull()
    expect((document.querySelector(q('rewind-confirm')) as HTMLButtonElement).disabled).toBe(true)
    w.unmount()
  })
})
