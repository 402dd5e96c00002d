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
    expect(worldsApi.create).toHaveBeenCalledWith({ name: 'Modern NYC', description: '', lore_scan_depth: 4, lore_budget: 500 })
    expect(w.find('[data-testid="error-description"]').text()).toBe('Too long (max 20000).')
    expect(w.find('[data-testid="error-name"]').exists()).toBe(false)
  })

  it('sets the lorebook’s depth and budget, and offers its entries once the world exists', async () => {
    setActivePinia(createPinia())
    const stubs = { LorebookEditor: { props: ['worldId', 'scanDepth'], template: '<div data-testid="lorebook-stub">{{ worldId }}/{{ scanDepth }}</div>' } }
    const fresh = mount(WorldForm, { global: { stubs } })
    expect(fresh.find('[data-testid="lorebook-stub"]').exists()).toBe(false)
    expect(fresh.find('[data-testid="lore-after-create"]').exists()).toBe(true)

    const world = { id: 'w1', name: 'Port', description: 'd', lore_scan_depth: 6, lore_budget: 800, created_at: '', updated_at: '' }
    vi.mocked(worldsApi.update).mockResolvedValue(world)
    const w = mount(WorldForm, { props: { item: world }, global: { stubs } })
    expect(w.find('[data-testid="lorebook-stub"]').text()).toBe('w1/6')
    await w.find('[data-testid="field-lore_scan_depth"]').setValue('60')
    await w.find('form').trigger('submit')
    expect(w.find('[data-testid="error-lore_scan_depth"]').text()).toBe('A whole number from 0 to 50.')
    expect(worldsApi.update).not.toHaveBeenCalled()
    await w.find('[data-testid="field-lore_scan_depth"]').setValue('2')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(worldsApi.update).toHaveBeenCalledWith('w1', { name: 'Port', description: 'd', lore_scan_depth: 2, lore_budget: 800 })
  })
})
