import { flushPromises, mount, RouterLinkStub } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { affiliationsApi } from '@/api/affiliations'
import { ApiError } from '@/api/http'
import { personasApi, uploadAvatar } from '@/api/personas'
import { makeAffiliation, makePersona } from '@/test/factories'
import PersonaForm from './PersonaForm.vue'

vi.mock('@/api/personas', () => ({
  personasApi: { list: vi.fn(), get: vi.fn(), create: vi.fn(), update: vi.fn(), patch: vi.fn(), remove: vi.fn() },
  uploadAvatar: vi.fn(),
  AVATAR_TYPES: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
  AVATAR_MAX_BYTES: 2 * 1024 * 1024,
}))
vi.mock('@/api/affiliations', () => ({
  affiliationsApi: { list: vi.fn(), get: vi.fn(), create: vi.fn(), update: vi.fn(), patch: vi.fn(), remove: vi.fn() },
}))

const q = (id: string) => `[data-testid="${id}"]`
const AFFS = [makeAffiliation({ id: 'aff-nypd', name: 'NYPD Undercover Unit' }), makeAffiliation({ id: 'aff-ros', name: 'Rosetti Crime Family' })]

async function mountForm(item: ReturnType<typeof makePersona> | null = null) {
  const pinia = createPinia()
  setActivePinia(pinia)
  const w = mount(PersonaForm, { props: { item }, global: { plugins: [pinia], stubs: { RouterLink: RouterLinkStub } } })
  await flushPromises()
  return w
}

describe('PersonaForm', () => {
  beforeEach(() => {
    vi.mocked(affiliationsApi.list).mockResolvedValue(AFFS)
    vi.mocked(personasApi.create).mockReset()
    vi.mocked(personasApi.update).mockReset()
    vi.mocked(uploadAvatar).mockReset()
  })

  it('lists affiliations as labelled checkboxes and sends the chosen ids', async () => {
    vi.mocked(personasApi.create).mockImplementation(async (input) => makePersona({ id: 'p1', ...input }))
    const w = await mountForm()
    const options = w.findAll(q('affiliation-option'))
    expect(options.map((o) => o.text())).toEqual(['NYPD Undercover Unit', 'Rosetti Crime Family'])

    await w.find(q('field-name')).setValue('Bob Wilson')
    await w.find(q('field-universal_truth')).setValue('New patient, works in finance')
    await w.find(q('field-internal_truth')).setValue('Undercover detective')
    await w.find(q('affiliation-check-aff-nypd')).setValue(true)
    await w.find('form').trigger('submit')
    await flushPromises()

    expect(personasApi.create).toHaveBeenCalledWith({
      name: 'Bob Wilson',
      known_as: '',
      avatar_url: '',
      style: '',
      greeting: '',
      example_dialogue: '',
      tags: [],
      universal_truth: 'New patient, works in finance',
      internal_truth: 'Undercover detective',
      external_truth: '',
      affiliations: ['aff-nypd'],
      covert_affiliations: [],
    })
    expect(w.emitted('saved')?.[0]?.[0]).toMatchObject({ id: 'p1', affiliations: ['aff-nypd'] })
  })

  it('sends a public name and a covert checkbox per chosen affiliation', async () => {
    vi.mocked(personasApi.create).mockImplementation(async (input) => makePersona({ id: 'p1', ...input }))
    const w = await mountForm()
    // A covert choice exists only for a group the persona belongs to.
    expect(w.find(q('covert-check-aff-nypd')).exists()).toBe(false)
    await w.find(q('field-name')).setValue('Detective Johnson')
    await w.find(q('field-known_as')).setValue('  Bob Wilson ')
    expect(w.find('label[for="persona-known_as"]').text()).toBe('Known as')
    await w.find(q('affiliation-check-aff-nypd')).setValue(true)
    await w.find(q('affiliation-check-aff-ros')).setValue(true)
    const covert = w.find(q('covert-check-aff-nypd'))
    expect(covert.attributes('aria-label')).toBe('Covert member of NYPD Undercover Unit')
    await covert.setValue(true)
    // Choosing covert does not touch the membership itself.
    expect((w.find(q('affiliation-check-aff-nypd')).element as HTMLInputElement).checked).toBe(true)
    await w.find('form').trigger('submit')
    await flushPromises()

    expect(vi.mocked(personasApi.create).mock.calls[0]?.[0]).toMatchObject({
      name: 'Detective Johnson',
      known_as: 'Bob Wilson',
      affiliations: ['aff-nypd', 'aff-ros'],
      covert_affiliations: ['aff-nypd'],
    })
  })

  it('shows stored covert memberships and drops the flag of a group left', async () => {
    vi.mocked(personasApi.update).mockImplementation(async (id, input) => makePersona({ id, ...input }))
    const w = await mountForm(
      makePersona({
        id: 'p2',
        name: 'Detective Johnson',
        known_as: 'Bob Wilson',
        affiliations: ['aff-nypd', 'aff-ros'],
        covert_affiliations: ['aff-nypd'],
      }),
    )
    expect((w.find(q('field-known_as')).element as HTMLInputElement).value).toBe('Bob Wilson')
    expect((w.find(q('covert-check-aff-nypd')).element as HTMLInputElement).checked).toBe(true)
    expect((w.find(q('covert-check-aff-ros')).element as HTMLInputElement).checked).toBe(false)

    await w.find(q('affiliation-check-aff-nypd')).setValue(false)
    expect(w.find(q('covert-check-aff-nypd')).exists()).toBe(false)
    await w.find(q('field-known_as')).setValue('')
    await w.find('form').trigger('submit')
    await flushPromises()
    const input = vi.mocked(personasApi.update).mock.calls[0]?.[1]
    expect(input).toMatchObject({ known_as: '', affiliations: ['aff-ros'], covert_affiliations: [] })
  })

  it('shows the server’s covert and public-name errors', async () => {
    vi.mocked(personasApi.create).mockRejectedValue(
      new ApiError(400, "Covert affiliations must be among the persona's affiliations.", {
        covert_affiliations: ["Covert affiliations must be among the persona's affiliations."],
        known_as: ['Ensure this field has no more than 200 characters.'],
      }),
    )
    const w = await mountForm()
    await w.find(q('field-name')).setValue('Johnson')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(w.find(q('error-covert_affiliations')).text()).toContain('must be among')
    expect(w.find(q('error-known_as')).text()).toContain('200 characters')
    expect(w.find(q('field-known_as')).attributes('aria-describedby')).toBe('persona-known_as-error')
  })

  it('edits an existing persona, keeping and changing its affiliations', async () => {
    vi.mocked(personasApi.update).mockImplementation(async (id, input) => makePersona({ id, ...input }))
    const w = await mountForm(makePersona({ id: 'p9', name: 'Tony', affiliations: ['aff-ros'] }))
    expect((w.find(q('affiliation-check-aff-ros')).element as HTMLInputElement).checked).toBe(true)
    await w.find(q('affiliation-check-aff-nypd')).setValue(true)
    await w.find(q('affiliation-check-aff-ros')).setValue(false)
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(vi.mocked(personasApi.update).mock.calls[0]?.[0]).toBe('p9')
    expect(vi.mocked(personasApi.update).mock.calls[0]?.[1].affiliations).toEqual(['aff-nypd'])
  })

  it('shows the server’s validation errors beside their fields', async () => {
    vi.mocked(personasApi.create).mockRejectedValue(
      new ApiError(400, 'Invalid input.', {
        name: ['Ensure this field has no more than 200 characters.'],
        internal_truth: ['Too long.'],
        affiliations: ['Unknown affiliation.'],
      }),
    )
    const w = await mountForm()
    await w.find(q('field-name')).setValue('x'.repeat(10))
    await w.find('form').trigger('submit')
    await flushPromises()

    const nameError = w.find(q('error-name'))
    expect(nameError.text()).toBe('Ensure this field has no more than 200 characters.')
    // Beside the field: inside the same .field block as the input, linked for screen readers.
    expect(nameError.element.closest('.field')?.querySelector('[data-testid="field-name"]')).not.toBeNull()
    expect(w.find(q('field-name')).attributes('aria-invalid')).toBe('true')
    expect(w.find(q('field-name')).attributes('aria-describedby')).toBe('persona-name-error')
    expect(w.find(q('error-internal_truth')).text()).toBe('Too long.')
    expect(w.find(q('error-affiliations')).text()).toBe('Unknown affiliation.')
    expect(w.find(q('form-error')).text()).toBe('Invalid input.')
    expect(w.emitted('saved')).toBeUndefined()
  })

  it('checks the name and avatar URL before sending', async () => {
    const w = await mountForm()
    await w.find(q('field-avatar_url')).setValue('not a url')
    await w.find('form').trigger('submit')
    expect(w.find(q('error-name')).text()).toContain('name')
    expect(w.find(q('error-avatar_url')).text()).toContain('http')
    expect(personasApi.create).not.toHaveBeenCalled()
  })

  it('sends the greeting, the example dialogue and the tags typed (Enter, comma, on save)', async () => {
    vi.mocked(personasApi.create).mockImplementation(async (input) => makePersona({ id: 'p1', ...input }))
    const w = await mountForm()
    await w.find(q('field-name')).setValue('Tony')
    await w.find(q('field-greeting')).setValue('*wipes a glass* We are closed.')
    await w.find(q('field-example_dialogue')).setValue('Tony: Sit.\nTony: Nobody leaves owing me.')
    const tagInput = w.find(q('field-tag-input'))
    await tagInput.setValue('noir')
    await tagInput.trigger('keydown', { key: 'Enter' })
    await tagInput.setValue('villain, NOIR')
    await tagInput.trigger('keydown', { key: ',' })
    expect(w.findAll(q('tag-chip')).map((c) => c.text().replace('×', '').trim())).toEqual(['noir', 'villain'])
    await tagInput.setValue('pasted, two, thr') // a paste: the last part is still being typed
    expect(w.findAll(q('tag-chip')).map((c) => c.text().replace('×', '').trim())).toEqual(['noir', 'villain', 'pasted', 'two'])
    expect((tagInput.element as HTMLInputElement).value).toBe('thr')
    await tagInput.setValue('')
    for (const t of ['pasted', 'two']) await w.find(`[aria-label="Remove tag ${t}"]`).trigger('click')
    await w.find('[aria-label="Remove tag villain"]').trigger('click')
    await tagInput.setValue('big   city') // still typed when saving: kept
    await w.find('form').trigger('submit')
    await flushPromises()

    expect(vi.mocked(personasApi.create).mock.calls[0]?.[0]).toMatchObject({
      greeting: '*wipes a glass* We are closed.',
      example_dialogue: 'Tony: Sit.\nTony: Nobody leaves owing me.',
      tags: ['noir', 'big city'],
    })
  })

  it('uploads a chosen avatar after creating the persona and hands back the stored copy', async () => {
    vi.mocked(personasApi.create).mockImplementation(async (input) => makePersona({ id: 'p1', ...input }))
    vi.mocked(uploadAvatar).mockImplementation(async (id) => makePersona({ id, name: 'Tony', avatar_url: '/media/avatars/abc.png' }))
    const w = await mountForm()
    await w.find(q('field-name')).setValue('Tony')
    const file = new File([new Uint8Array([0x89, 0x50])], 'tony.png', { type: 'image/png' })
    const input = w.find(q('field-avatar_file'))
    Object.defineProperty(input.element, 'files', { value: [file] })
    await input.trigger('change')
    expect(w.find(q('avatar-pending')).text()).toContain('tony.png')
    await w.find('form').trigger('submit')
    await flushPromises()

    expect(uploadAvatar).toHaveBeenCalledWith('p1', file)
    expect(w.emitted('saved')?.[0]?.[0]).toMatchObject({ id: 'p1', avatar_url: '/media/avatars/abc.png' })
  })

  it('refuses a file that is not an image or too large before sending anything', async () => {
    const w = await mountForm()
    const input = w.find(q('field-avatar_file'))
    const big = new File([new Uint8Array(2 * 1024 * 1024 + 1)], 'huge.png', { type: 'image/png' })
    Object.defineProperty(input.element, 'files', { value: [big], configurable: true })
    await input.trigger('change')
    expect(w.find(q('error-avatar_url')).text()).toContain('the limit is 2 MiB')
    const svg = new File(['<svg/>'], 'x.svg', { type: 'image/svg+xml' })
    Object.defineProperty(input.element, 'files', { value: [svg], configurable: true })
    await input.trigger('change')
    expect(w.find(q('error-avatar_url')).text()).toContain('PNG, JPEG, WebP or GIF')
    expect(w.find(q('avatar-pending')).exists()).toBe(false)
    expect(uploadAvatar).not.toHaveBeenCalled()
  })

  it('shows a refused upload under the avatar and retries on the persona already created', async () => {
    vi.mocked(personasApi.create).mockImplementation(async (input) => makePersona({ id: 'p1', ...input }))
    vi.mocked(personasApi.update).mockImplementation(async (id, input) => makePersona({ id, ...input }))
    vi.mocked(uploadAvatar).mockRejectedValueOnce(
      new ApiError(400, 'The avatar must be a PNG, JPEG, WebP or GIF image.', {
        avatar: ['The avatar must be a PNG, JPEG, WebP or GIF image.'],
      }),
    )
    const w = await mountForm()
    await w.find(q('field-name')).setValue('Tony')
    const input = w.find(q('field-avatar_file'))
    Object.defineProperty(input.element, 'files', { value: [new File(['x'], 'fake.png', { type: 'image/png' })] })
    await input.trigger('change')
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(w.find(q('error-avatar_url')).text()).toContain('PNG, JPEG, WebP or GIF')
    expect(w.emitted('saved')).toBeUndefined()

    vi.mocked(uploadAvatar).mockImplementation(async (id) => makePersona({ id, name: 'Tony', avatar_url: '/media/avatars/b.png' }))
    await w.find('form').trigger('submit')
    await flushPromises()
    expect(personasApi.create).toHaveBeenCalledTimes(1)
    expect(vi.mocked(personasApi.update).mock.calls[0]?.[0]).toBe('p1')
    expect(w.emitted('saved')).toHaveLength(1)
  })
})
