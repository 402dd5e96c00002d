/** Scenarios: public starting situations. */
import { crudApi } from './crud'
import type { Scenario, ScenarioInput } from './types'

export const scenariosApi = crudApi<Scenario, ScenarioInput>('/api/scenarios')
