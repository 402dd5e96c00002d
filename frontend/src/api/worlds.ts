/** Worlds: the shared laws and setting. */
import { crudApi } from './crud'
import type { World, WorldInput } from './types'

export const worldsApi = crudApi<World, WorldInput>('/api/worlds')
