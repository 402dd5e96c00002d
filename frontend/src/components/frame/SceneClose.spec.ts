import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import SceneClose from './SceneClose.vue'

const q = (id: string) => `[data-testid="${id}"]`

describe('SceneClose', () => {
  it('closes the scene with the next title, and empties it once closed', async () => {
    const sent: string[] = []
    const w = mount(SceneClose, {
      props: { onClose: (title: string, done: (ok: boolean) => void) => (sent.push(title), done(true)) },
    })
    await w.find(q('scene-close-title')).setValue('The docks')
    await w.find('form').trigger('submit')
    expect(sent).toEqual(['The docks'])
    expect((w.find(q('scene-close-title')).element as HTMLInputElement).value).toBe('')
  })

  it('keeps the title when the server refused, and is disabled while busy', async () => {
    const w = mount(SceneClose, { props: { onClose: (_t: string, done: (ok: boolean) => void) => done(false) } })
    await w.find(q('scene-close-title')).setValue('Keep')
    await w.find('form').trigger('submit')
    expect((w.find(q('scene-close-title')).element as HTMLInputElement).value).toBe('Keep')
    await w.setProps({ busy: true })
    expect(w.find(q('scene-close-button')).attributes('disabled')).toBeDefined()
  })
})
