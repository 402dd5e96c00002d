import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import { changePassword, deleteAccount } from '@/api/auth'
import { makeDefault, modelsApi } from '@/api/models'
import { useAuthStore } from '@/stores/auth'
import { makeModel } from '@/test/factories'
import { THEME_KEY } from '@/lib/theme'
import SettingsView from './SettingsView.vue'

vi.mock('@/api/auth', () => ({ changePassword: vi.fn(), deleteAccount: vi.fn() }))
vi.mock('@/api/models', () => ({
  modelsApi: { list: vi.fn(), get: vi.fn(), create: vi.fn(), update: vi.fn(), patch: vi.fn(), remove: vi.fn() },
  createModels: vi.fn(),
  makeDefault: vi.fn(),
  testModel: vi.fn(),
}))

const q = (id: string) => `[data-testid="${id}"]`
const OFFLINE = makeModel({ id: 'off', name: 'Offline Narrator', provider: 'offline', api_endpoint: 'offline://narrator', is_default: true })
const GPT = makeModel({ id: 'gpt', name: 'GPT-4o' })

async function mountSettings() {
  setActivePinia(createPinia())
  useAuthStore().user = { id: 1, username: 'ada', email: '' } as never
  const wrapper = mount(SettingsView, { global: { stubs: { RouterLink: RouterLinkStub } } })
  await flushPromises()
  return wrapper
}

describe('SettingsView', () => {
  const assign = vi.fn()

  beforeEach(() => {
    vi.mocked(modelsApi.list).mockResolvedValue([OFFLINE, GPT])
    vi.mocked(changePassword).mockReset()
    vi.mocked(deleteAccount).mockReset()
    vi.mocked(makeDefault).mockReset()
    vi.stubGlobal('location', { ...window.location, assign })
    assign.mockReset()
    localStorage.clear()
  })
  afterEach(() => vi.unstubAllGlobals())

  it('shows the server’s password errors beside the fields and keeps the form', async () => {
    vi.mocked(changePassword).mockRejectedValue(
      new ApiError(400, 'This password is too common.', { new_password: ['This password is too common.'] }),
    )
    const w = await mountSettings()
    await w.find(q('field-old_password')).setValue('old-secret-1')
    await w.find(q('field-new_password')).setValue('password123')
    await w.find(q('field-repeat')).setValue('password123')
    await w.find(q('password-form')).trigger('submit')
    await flushPromises()
    expect(changePassword).toHaveBeenCalledWith('old-secret-1', 'password123')
    expect(w.find(q('error-new_password')).text()).toBe('This password is too common.')
    expect((w.find(q('field-old_password')).element as HTMLInputElement).value).toBe('old-secret-1')
  })

  it('refuses two different new passwords without asking the server, then clears the form on success', async () => {
    const w = await mountSettings()
    await w.find(q('field-old_password')).setValue('old-secret-1')
    await w.find(q('field-new_password')).setValue('a-new-secret-9')
    await w.find(q('field-repeat')).setValue('a-new-secret-8')
    await w.find(q('password-form')).trigger('submit')
    expect(changePassword).not.toHaveBeenCalled()
    expect(w.find(q('error-repeat')).text()).toContain('differ')

    vi.mocked(changePassword).mockResolvedValue(undefined)
    await w.find(q('field-repeat')).setValue('a-new-secret-9')
    await w.find(q('password-form')).trigger('submit')
    await flushPromises()
    expect(changePassword).toHaveBeenCalledWith('old-secret-1', 'a-new-secret-9')
    expect((w.find(q('field-old_password')).element as HTMLInputElement).value).toBe('')
  })

  it('makes the chosen model the default', async () => {
    vi.mocked(makeDefault).mockResolvedValue({ ...GPT, is_default: true })
    const w = await mountSettings()
    const select = w.find(q('field-default_model'))
    expect((select.element as HTMLSelectElement).value).toBe('off')
    expect(select.text()).toContain('Offline Narrator (offline narrator)')
    await select.setValue('gpt')
    await flushPromises()
    expect(makeDefault).toHaveBeenCalledWith('gpt')
    expect((select.element as HTMLSelectElement).value).toBe('gpt')
  })

  it('applies and remembers the theme', async () => {
    const w = await mountSettings()
    await w.find(`${q('theme-light')} input`).setValue(true)
    expect(document.documentElement.dataset.theme).toBe('light')
    expect(localStorage.getItem(THEME_KEY)).toBe('light')
    await w.find(`${q('theme-dark')} input`).setValue(true)
    expect(document.documentElement.dataset.theme).toBe('dark')
    expect(w.find(q('theme-dark')).classes()).toContain('on')
  })

  it('deletes the account only once the username is typed, and shows a wrong password', async () => {
    vi.mocked(deleteAccount).mockRejectedValueOnce(
      new ApiError(400, 'That is not your current password.', { password: ['That is not your current password.'] }),
    )
    const w = await mountSettings()
    const button = w.find(q('delete-submit'))
    await w.find(q('field-delete-username')).setValue('Ada')
    expect(button.attributes('disabled')).toBeDefined()
    await w.find(q('field-delete-username')).setValue('ada')
    await w.find(q('field-delete-password')).setValue('wrong')
    expect(button.attributes('disabled')).toBeUndefined()
    await w.find(q('delete-form')).trigger('submit')
    await flushPromises()
    expect(w.find(q('error-password')).text()).toBe('That is not your current password.')
    expect(assign).not.toHaveBeenCalled()

    vi.mocked(deleteAccount).mockResolvedValueOnce(undefined)
    await w.find(q('field-delete-password')).setValue('right')
    await w.find(q('delete-form')).trigger('submit')
    await flushPromises()
    expect(deleteAccount).toHaveBeenLastCalledWith('ada', 'right')
    expect(assign).toHaveBeenCalledWith('/signup')
  })
})
