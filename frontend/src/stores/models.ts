/** LLM models store: the collection plus bulk add and the single default. */
import { defineStore } from 'pinia'
import { computed } from 'vue'
import { createModels, makeDefault as apiMakeDefault, modelsApi } from '@/api/models'
import type { Model, ModelInput } from '@/api/types'
import { useCollection } from './collection'

/** The built-in deterministic narrator, used when no real model is configured. */
export const isOfflineModel = (m: Pick<Model, 'provider' | 'api_endpoint'>) =>
  m.provider === 'offline' || m.api_endpoint.startsWith('offline://')

export const useModelsStore = defineStore('models', () => {
  const collection = useCollection(modelsApi)
  const { items, upsert } = collection

  const defaultModel = computed(() => items.value.find((m) => m.is_default) ?? null)
  const realModels = computed(() => items.value.filter((m) => !isOfflineModel(m)))

  function markDefault(model: Model) {
    items.value = items.value.map((m) => (m.id === model.id ? model : m.is_default ? { ...m, is_default: false } : m))
  }

  async function makeDefault(id: string): Promise<Model> {
    const model = await apiMakeDefault(id)
    markDefault(model)
    return model
  }

  async function createMany(inputs: ModelInput[]): Promise<Model[]> {
    const created = await createModels(inputs)
    created.forEach(upsert)
    const newDefault = created.find((m) => m.is_default)
    if (newDefault) markDefault(newDefault)
    return created
  }

  async function save(id: string | null, input: ModelInput): Promise<Model> {
    const model = id ? await collection.update(id, input) : await collection.create(input)
    if (model.is_default) markDefault(model)
    return model
  }

  return { ...collection, defaultModel, realModels, makeDefault, createMany, save }
})
