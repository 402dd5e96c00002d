/** Form submission state: saving flag, the server's field errors and its general message. */
import { nextTick, readonly, ref } from 'vue'
import { ApiError, type FieldErrors } from '@/api/http'

export function useFormSubmit() {
  const saving = ref(false)
  const errors = ref<FieldErrors>({})
  const formError = ref('')

  /** Bring the first field with an error into view (long forms scroll inside modals). */
  function focusFirstError() {
    void nextTick(() => {
      const el = document.querySelector<HTMLElement>('[aria-invalid="true"]')
      el?.focus({ preventScroll: true })
      el?.scrollIntoView?.({ block: 'center', behavior: 'smooth' })
    })
  }

  /** First message for a field ('' if none). */
  const errorFor = (field: string) => errors.value[field]?.[0] ?? ''

  /** Client-side checks: set messages for fields; returns true when there were none. */
  function validate(messages: Record<string, string | false | undefined | null>): boolean {
    const found: FieldErrors = {}
    for (const [field, message] of Object.entries(messages)) if (message) found[field] = [message]
    errors.value = found
    formError.value = Object.keys(found).length ? 'Please fix the highlighted fields.' : ''
    if (Object.keys(found).length) focusFirstError()
    return Object.keys(found).length === 0
  }

  /**
   * Run `action`; on an ApiError keep its field errors (shown beside the fields) and its
   * detail. Resolves with the action's result, or undefined when it failed.
   */
  async function submit<T>(action: () => Promise<T>): Promise<T | undefined> {
    saving.value = true
    errors.value = {}
    formError.value = ''
    try {
      return await action()
    } catch (e) {
      if (e instanceof ApiError) {
        errors.value = e.fieldErrors
        const general = [...(e.fieldErrors.non_field_errors ?? []), ...(e.fieldErrors.detail ?? [])]
        formError.value = general[0] ?? e.detail
        focusFirstError()
      } else {
        formError.value = e instanceof Error ? e.message : 'Something went wrong.'
      }
      return undefined
    } finally {
      saving.value = false
    }
  }

  /** Forget the last failure's messages (e.g. once something succeeded that proves them stale). */
  function clearErrors() {
    errors.value = {}
    formError.value = ''
  }

  return {
    saving: readonly(saving),
    errors: readonly(errors),
    formError: readonly(formError),
    errorFor,
    validate,
    submit,
    clearErrors,
  }
}
