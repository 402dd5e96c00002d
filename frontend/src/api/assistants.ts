/** Assistants: a persona played by a model. */
import { crudApi } from './crud'
import type { Assistant, AssistantInput } from './types'

export const assistantsApi = crudApi<Assistant, AssistantInput>('/api/assistants')
