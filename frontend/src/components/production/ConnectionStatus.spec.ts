import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import ConnectionStatus from './ConnectionStatus.vue'

function status(closeCode: number | null, attempts = 1) {
  return mount(ConnectionStatus, { props: { status: 'connecting', closeCode, attempts } })
}

describe('ConnectionStatus', () => {
  it('says why it reconnects when the server closed it for one of its limits', () => {
    expect(status(4408).text()).toContain('Catching up…')
    expect(status(4408).attributes('title')).toContain('fell behind')
    expect(status(4429).text()).toContain('Too many tabs')
    expect(status(1009).text()).toContain('Message too large')
    expect(status(1009).attributes('title')).toContain('too large')
  })

  it('says it is reconnecting after a plain drop', () => {
    expect(status(1006).text()).toContain('Reconnecting…')
    expect(status(null, 0).text()).toContain('Connecting…')
  })

  it('says a closed scene ended, and other refusals that access ended', () => {
    const failed = (closeCode: number) => mount(ConnectionStatus, { props: { status: 'failed', closeCode, attempts: 0 } })
    expect(failed(4404).text()).toContain('Ended')
    expect(failed(4403).text()).toContain('Access ended')
    expect(failed(4401).text()).toContain('Signed out')
  })
})
