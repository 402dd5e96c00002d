/** LLM model configurations: CRUD, bulk creation, default, server-side connection test. */
import { crudApi } from './crud'
import { http } from './http'
import type { Model, ModelInput, ModelTestInput, ModelTestResult } from './types'

export const modelsApi = crudApi<Model, ModelInput>('/api/models')

/** All-or-nothing creation of many models; a 400 carries one errors object per item. */
export const createModels = (items: ModelInput[]) => http.post<Model[]>('/api/models', items)

export const makeDefault = (id: string) =>
  http.patch<Model>(`/api/models/${encodeURIComponent(id)}/default`, {})

export const testModel = (input: ModelTestInput) =>
  http.post<ModelTestResult>('/api/models/test', input)
