import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError } from '@/api/http'
import ResourcePage from './ResourcePage.vue'

interface Item {
  id: string
  name: string
  description: string
  tags: string[]
  created_at: string
  updated_at: string
}

const q = (id: string) => `[data-testid="${id}"]`
const item = (id: string, name: string, created: string, updated: string, extra: Partial<Item> = {}): Item => ({
  id,
  name,
  description: '',
  tags: [],
  created_at: `2025-01-0${created}T00:00:00Z`,
  updated_at: `2025-01-0${updated}T00:00:00Z`,
  ...extra,
})
// Arrival order differs from every sort order: the list must not depend on it.
const ITEMS = [
  item('b', 'Mars', '2', '2', { description: 'Red dust', tags: ['sci-fi'] }),
  item('c', 'Élysée', '3', '3', { tags: ['Paris', 'sci-fi'] }),
  item('a', 'atlantis', '1', '9'),
]

function mountPage(props: Partial<{ items: Item[]; remove: (i: Item) => Promise<void>; tagsOf: (i: Item) => string[] }> = {}) {
  return mount(ResourcePage<Item>, {
    props: {
      title: 'Worlds',
      entity: 'world',
      items: ITEMS,
      loaded: true,
      columns: [{ key: 'name', label: 'Name' }],
      remove: vi.fn(),
      searchText: (i: Item) => i.description,
      ...props,
    },
    global: { plugins: [createPinia()], stubs: { teleport: true } },
  })
}
const names = (w: ReturnType<typeof mountPage>) => w.findAll(q('world-row')).map((r) => r.text().split('Edit')[0]?.trim())

describe('ResourcePage lists', () => {
  beforeEach(() => {
    setActivePinia(createPinia())
    localStorage.clear()
  })

  it('shows the newest first whatever order the items came in, and the sort chosen is kept', async () => {
    const w = mountPage()
    expect(names(w)).toEqual(['Élysée', 'Mars', 'atlantis'])
    await w.find(q('list-sort')).setValue('name')
    expect(names(w)).toEqual(['atlantis', 'Élysée', 'Mars'])
    await w.find(q('list-sort')).setValue('updated')
    expect(names(w)).toEqual(['atlantis', 'Élysée', 'Mars'])
    await flushPromises()
    // After a reload the same choice, hence the same order.
    expect(names(mountPage())).toEqual(['atlantis', 'Élysée', 'Mars'])
  })

  it('a newly created item appended at the end still shows first', async () => {
    const w = mountPage()
    await w.setProps({ items: [...ITEMS, item('d', 'Venus', '5', '5')] })
    expect(names(w)[0]).toBe('Venus')
  })

  it('searches names and extra text, ignoring case and accents, and says when nothing matches', async () => {
    const w = mountPage()
    await w.find(q('list-search')).setValue('elysee')
    expect(names(w)).toEqual(['Élysée'])
    await w.find(q('list-search')).setValue('red DUST')
    expect(names(w)).toEqual(['Mars'])
    expect(w.find(q('list-count')).text()).toBe('1 of 3')
    await w.find(q('list-search')).setValue('pluto')
    expect(w.find(q('world-no-match')).text()).toContain('No worlds match “pluto”')
    await w.find(q('list-clear')).trigger('click')
    expect(names(w)).toHaveLength(3)
  })

  it('filters by tag when items have tags, from the select or from a row', async () => {
    const w = mountPage({ tagsOf: (i) => i.tags })
    const options = w.find(q('list-tag')).findAll('option').map((o) => o.text())
    expect(options).toEqual(['All tags', 'Paris', 'sci-fi'])
    await w.find(q('list-tag')).setValue('Paris')
    expect(names(w)).toEqual(['Élysée'])
    ;(w.vm as unknown as { filterByTag: (t: string) => void }).filterByTag('sci-fi')
    await flushPromises()
    expect(names(w)).toEqual(['Élysée', 'Mars'])
  })

  it('has no tag filter for a list without tags', () => {
    expect(mountPage().find(q('list-tag')).exists()).toBe(false)
  })
})

describe('ResourcePage deletes', () => {
  beforeEach(() => {
    setActivePinia(createPinia())
    localStorage.clear()
  })

  it('shows the server’s refusal in the dialog, with only a way to close it', async () => {
    const message = 'Used by the production “Therapy” and the frame “Friday game”. It cannot be deleted while they use it.'
    const remove = vi.fn().mockRejectedValue(new ApiError(409, message))
    const w = mountPage({ remove })
    await w.findAll(q('world-delete'))[0]?.trigger('click')
    expect(w.find(q('confirm-dialog')).text()).toContain('“Élysée” will be deleted')
    await w.find(q('confirm-ok')).trigger('click')
    await flushPromises()

    expect(remove).toHaveBeenCalledTimes(1)
    const dialog = w.find(q('confirm-dialog'))
    expect(dialog.find(q('confirm-error')).text()).toBe(message)
    expect(dialog.find('[role="alert"]').exists()).toBe(true)
    expect(dialog.find(q('confirm-ok')).exists()).toBe(false)
    expect(dialog.find(q('confirm-cancel')).text()).toBe('Close')
    expect(dialog.text()).toContain('This world is in use')
    await dialog.find(q('confirm-cancel')).trigger('click')
    expect(w.find(q('confirm-dialog')).exists()).toBe(false)

    // Asking again starts clean: the old refusal is not shown before trying.
    await w.findAll(q('world-delete'))[0]?.trigger('click')
    expect(w.find(q('confirm-error')).exists()).toBe(false)
    expect(w.find(q('confirm-ok')).exists()).toBe(true)
  })

  it('keeps the delete button after a failure that a retry may fix', async () => {
    const remove = vi.fn().mockRejectedValueOnce(new ApiError(0, 'The server could not be reached.')).mockResolvedValueOnce(undefined)
    const w = mountPage({ remove })
    await w.findAll(q('world-delete'))[0]?.trigger('click')
    await w.find(q('confirm-ok')).trigger('click')
    await flushPromises()
    expect(w.find(q('confirm-error')).text()).toContain('could not be reached')
    await w.find(q('confirm-ok')).trigger('click')
    await flushPromises()
    expect(remove).toHaveBeenCalledTimes(2)
    expect(w.find(q('confirm-dialog')).exists()).toBe(false)
  })
})
