/** Toast notifications (errors, confirmations) shown in the corner. */
import { defineStore } from 'pinia'
import { ref } from 'vue'
import { ApiError } from '@/api/http'

export type ToastKind = 'info' | 'success' | 'error'

export interface Toast {
  id: number
  kind: ToastKind
  message: string
}

let nextId = 1

export const useToastsStore = defineStore('toasts', () => {
  const toasts = ref<Toast[]>([])

  function dismiss(id: number) {
    toasts.value = toasts.value.filter((t) => t.id !== id)
  }

  function push(message: string, kind: ToastKind = 'info', timeoutMs = kind === 'error' ? 7000 : 3500): number {
    const id = nextId++
    toasts.value.push({ id, kind, message })
    if (toasts.value.length > 5) toasts.value.shift()
    if (timeoutMs > 0) setTimeout(() => dismiss(id), timeoutMs)
    return id
  }

  const success = (message: string) => push(message, 'success')

  /** Show an error; ApiErrors show their server detail. */
  function error(e: unknown, fallback = 'Something went wrong.') {
    const message = e instanceof ApiError ? e.detail : e instanceof Error ? e.message || fallback : fallback
    return push(message, 'error')
  }

  return { toasts, push, success, error, dismiss }
})
