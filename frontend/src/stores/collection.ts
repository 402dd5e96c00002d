/** The state and actions every authoring collection store shares (list, create, update, delete). */
import { computed, ref, type Ref } from 'vue'
import type { CrudApi } from '@/api/crud'
import { ApiError } from '@/api/http'

export function useCollection<T extends { id: string }, In>(api: CrudApi<T, In>) {
  const items = ref([]) as Ref<T[]>
  const loading = ref(false)
  const loaded = ref(false)
  const error = ref<ApiError | null>(null)
  let inflight: Promise<void> | null = null

  const byId = computed(() => new Map(items.value.map((i) => [i.id, i])))

  /** Load the list (once; `force` reloads, keeping the old rows visible meanwhile). */
  function fetchAll(force = false): Promise<void> {
    if (loaded.value && !force) return Promise.resolve()
    if (inflight) return inflight
    loading.value = true
    inflight = api
      .list()
      .then((list) => {
        items.value = list
        loaded.value = true
        error.value = null
      })
      .catch((e: unknown) => {
        error.value = e instanceof ApiError ? e : new ApiError(0, String(e))
      })
      .finally(() => {
        loading.value = false
        inflight = null
      })
    return inflight
  }

  function upsert(item: T): T {
    const at = items.value.findIndex((i) => i.id === item.id)
    if (at >= 0) items.value.splice(at, 1, item)
    else items.value.push(item)
    return item
  }

  async function create(input: In): Promise<T> {
    return upsert(await api.create(input))
  }

  async function update(id: string, input: In): Promise<T> {
    return upsert(await api.update(id, input))
  }

  async function remove(id: string): Promise<void> {
    await api.remove(id)
    items.value = items.value.filter((i) => i.id !== id)
  }

  return { items, loading, loaded, error, byId, fetchAll, upsert, create, update, remove }
}
