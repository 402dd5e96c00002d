import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import CardExportMenu from './CardExportMenu.vue'

describe('CardExportMenu', () => {
  it('links each spec and format as a plain download', () => {
    const w = mount(CardExportMenu, { props: { id: 'p1', name: 'Mira' } })
    const links = w.findAll('a')
    expect(links.map((a) => a.attributes('href'))).toEqual([
      '/api/personas/p1/card?spec=v3&format=png',
      '/api/personas/p1/card?spec=v3&format=json',
      '/api/personas/p1/card?spec=v2&format=png',
      '/api/personas/p1/card?spec=v2&format=json',
    ])
    expect(links.every((a) => a.attributes('download') !== undefined)).toBe(true)
    expect(w.find('summary').text()).toBe('Export card')
  })
})

describe('CardExportMenu, chosen', () => {
  it('folds back once a download is chosen', async () => {
    const w = mount(CardExportMenu, { props: { id: 'p1', name: 'Mira' } })
    const details = w.find('details').element as HTMLDetailsElement
    details.open = true
    await w.find('a').trigger('click')
    expect(details.open).toBe(false)
  })
})
