import { flushPromises, mount } from '@vue/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import PersonaImport from './PersonaImport.vue'

const q = (id: string) => `[data-testid="${id}"]`

async function pick(w: ReturnType<typeof mount>, file: File) {
  const input = w.find(q('persona-import-file'))
  Object.defineProperty(input.element, 'files', { value: [file], configurable: true })
  await input.trigger('change')
  await flushPromises()
}

describe('PersonaImport', () => {
  const fetchMock = vi.fn()
  beforeEach(() => vi.stubGlobal('fetch', fetchMock))
  afterEach(() => {
    vi.unstubAllGlobals()
    fetchMock.mockReset()
  })

  it('offers card and template files, and emits the persona the server made', async () => {
    fetchMock.mockResolvedValue(new Response(JSON.stringify({ id: 'p1', name: 'Mira Vance' }), { status: 201 }))
    const w = mount(PersonaImport)
    expect(w.find(q('persona-import-file')).attributes('accept')).toContain('.png')
    await pick(w, new File(['{}'], 'mira.v3.json'))
    expect(w.emitted('imported')?.[0]).toEqual([{ id: 'p1', name: 'Mira Vance' }])
    expect(w.find(q('persona-import-error')).exists()).toBe(false)
  })

  it('shows the server\'s reason when a card is refused, and emits nothing', async () => {
    const detail = "The PNG holds no character card (no 'chara' or 'ccv3' text chunk)."
    fetchMock.mockResolvedValue(new Response(JSON.stringify({ detail, errors: { file: [detail] } }), { status: 400 }))
    const w = mount(PersonaImport)
    await pick(w, new File(['png'], 'face.png', { type: 'image/png' }))
    expect(w.emitted('imported')).toBeUndefined()
    const error = w.find(q('persona-import-error'))
    expect(error.attributes('role')).toBe('alert')
    expect(error.text()).toContain('“face.png” was not imported')
    expect(error.text()).toContain(detail)
  })

  it('refuses a file over the limit without sending it', async () => {
    const w = mount(PersonaImport)
    const big = new File(['x'], 'huge.png')
    Object.defineProperty(big, 'size', { value: 9 * 1024 * 1024 })
    await pick(w, big)
    expect(fetchMock).not.toHaveBeenCalled()
    expect(w.find(q('persona-import-error')).text()).toContain('too large')
  })
})
