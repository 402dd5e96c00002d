import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import { worldsApi } from '@/api/worlds'
import WorldForm from './WorldForm.vue'

vi.mock('@/api/worlds', () => ({
  worldsApi: { list: vi.fn(), get: vi.fn(), create: vi.fn(), update: vi.fn(), patch: vi.fn(), remove: vi.fn() },
}))

describe('WorldForm', () => {
  it('labels its inputs and shows field errors from the server', async () => {
    setActivePinia(createPinia())
    vi.mocked(worldsApi.create).mockRejectedValue(new ApiError(400, 'Invalid input.', { description: ['Too long (max 20000).'] }))
    const w = mount(WorldForm)
    expect(w.find('label[for="world-name"]').text()).toContain('Name')
    expect(w.find('#world-name').attributes('data-testid')).toBe('field-name')
    await w.find('[data-testid="field-name"]').setValue('Modern NYC')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(worldsApi.create).toHaveBeenCalledWith({ name: 'Modern NYC', description: '' })
    expect(w.find('[data-testid="error-description"]').text()).toBe('Too long (max 20000).')
    expect(w.find('[data-testid="error-name"]').exists()).toBe(false)
  })
})
