/** Search, sort and tag filter over a list loaded whole; the sort chosen is kept per list. */
import { computed, ref, watch, type ComputedRef, type Ref } from 'vue'

export type SortKey = 'newest' | 'name' | 'updated'

export const SORTS: { key: SortKey; label: string }[] = [
  { key: 'newest', label: 'Newest first' },
  { key: 'name', label: 'Name A–Z' },
  { key: 'updated', label: 'Recently updated' },
]

export interface Listed {
  id: string
  created_at: string
  updated_at?: string
}

export interface ListQueryOptions<T> {
  /** Names the stored sort choice ("worlds"). */
  key: string
  /** The name sorted by and searched. */
  name: (item: T) => string
  /** More text the search looks in (truths, tags, …); the name is always searched. */
  text?: (item: T) => string
  /** The item's tags, for the tag filter. */
  tags?: (item: T) => string[]
  defaultSort?: SortKey
}

export interface ListQuery<T> {
  search: Ref<string>
  sort: Ref<SortKey>
  /** '' = every tag. */
  tag: Ref<string>
  /** Every tag any item has, A–Z (each once, whatever its case). */
  allTags: ComputedRef<string[]>
  shown: ComputedRef<T[]>
}

const STORE_PREFIX = 'lmix.sort.'

/** Lower case, without accents: "Élan" is found by "elan". */
function fold(text: string): string {
  return text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
}

function storedSort(key: string): SortKey | null {
  try {
    const value = localStorage.getItem(STORE_PREFIX + key)
    return SORTS.some((s) => s.key === value) ? (value as SortKey) : null
  } catch {
    return null // storage may be unavailable (private mode): the default serves
  }
}

const byName = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true })

/**
 * The order is computed from the items themselves, never from the order they arrived in, so a
 * list right after creating something reads the same as after a reload.
 */
export function useListQuery<T extends Listed>(items: () => T[], options: ListQueryOptions<T>): ListQuery<T> {
  const search = ref('')
  const tag = ref('')
  const sort = ref<SortKey>(storedSort(options.key) ?? options.defaultSort ?? 'newest')
  watch(sort, (value) => {
    try {
      localStorage.setItem(STORE_PREFIX + options.key, value)
    } catch {
      /* not kept: fine */
    }
  })

  const allTags = computed(() => {
    const seen = new Map<string, string>()
    for (const item of items()) for (const t of options.tags?.(item) ?? []) if (!seen.has(fold(t))) seen.set(fold(t), t)
    return [...seen.values()].sort(byName.compare)
  })

  const compare = (a: T, b: T): number => {
    // Ties (same second, same name) fall back to the id: the order never depends on arrival.
    const tie = a.id < b.id ? -1 : a.id > b.id ? 1 : 0
    if (sort.value === 'name') return byName.compare(options.name(a), options.name(b)) || tie
    const stamp = (x: T) => (sort.value === 'updated' ? (x.updated_at ?? x.created_at) : x.created_at)
    const [sa, sb] = [stamp(a), stamp(b)]
    return sa < sb ? 1 : sa > sb ? -1 : tie
  }

  const shown = computed(() => {
    const words = fold(search.value).split(/\s+/).filter(Boolean)
    const wanted = fold(tag.value)
    return items()
      .filter((item) => !wanted || (options.tags?.(item) ?? []).some((t) => fold(t) === wanted))
      .filter((item) => {
        if (!words.length) return true
        const haystack = fold(`${options.name(item)}\n${options.text?.(item) ?? ''}`)
        return words.every((w) => haystack.includes(w))
      })
      .sort(compare)
  })

  return { search, sort, tag, allTags, shown }
}
