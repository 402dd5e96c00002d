/** The sampler presets and default system prompt template, fetched once per page load. */
import { readonly, ref } from 'vue'
import { ApiError } from '@/api/http'
import { getPromptControls } from '@/api/promptControls'
import type { PromptControls } from '@/api/types'

const controls = ref<PromptControls | null>(null)
const loading = ref(false)
const error = ref('')
let inflight: Promise<void> | null = null

function load(): Promise<void> {
  if (controls.value) return Promise.resolve()
  if (inflight) return inflight
  loading.value = true
  error.value = ''
  inflight = getPromptControls()
    .then((value) => {
      controls.value = value
    })
    .catch((e: unknown) => {
      error.value = e instanceof ApiError ? e.detail : 'The presets could not be loaded.'
    })
    .finally(() => {
      loading.value = false
      inflight = null
    })
  return inflight
}

export function usePromptControls() {
  void load()
  return { controls: readonly(controls), loading: readonly(loading), error: readonly(error), reload: load }
}

/** Tests start from nothing loaded. */
export function resetPromptControls() {
  controls.value = null
  error.value = ''
  inflight = null
}
